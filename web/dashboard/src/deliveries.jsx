// Webhook deliveries, each with its attempts (response code, timing,
// error) and a "Resend" button.
import { useState } from 'preact/hooks';
import { gql } from './api.js';
import { Note, Problem, Time } from './ui.jsx';

const resendMutation = `mutation Resend($id: ID!) { resendWebhookDelivery(id: $id) { id status attemptCount } }`;

// Attempts lists a delivery's attempts; without them (a list that did
// not ask for them) it sums them up from the delivery's last attempt.
function Attempts({ delivery: d }) {
  const attempts = d.attempts;
  if (!attempts) {
    if (!d.attemptCount) return <span>none yet</span>;
    const last = d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : d.lastError ?? 'no answer';
    return (
      <span>
        {d.attemptCount} {d.attemptCount === 1 ? 'attempt' : 'attempts'}, the last: {last}
      </span>
    );
  }
  if (!attempts.length) return <span>none yet</span>;
  return (
    <ul class="attempts">
      {attempts.map((a) => (
        <li>
          <span>Attempt {a.number}:</span>{' '}
          <span class={a.success ? 'ok' : 'bad'}>{a.statusCode ? `HTTP ${a.statusCode}` : a.error ?? 'no answer'}</span>
          {a.statusCode && a.error && !a.success ? ` (${a.error})` : ''} in {a.latencyMs} ms, <Time iso={a.startedAt} />
        </li>
      ))}
    </ul>
  );
}

export function Deliveries({ deliveries, caption, onChange }) {
  const [note, setNote] = useState(null);
  const [error, setError] = useState(null);
  const resend = async (d) => {
    setError(null);
    setNote(null);
    try {
      await gql(resendMutation, { id: d.id });
      setNote(`Delivery ${d.id} sent again.`);
      onChange?.();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      {note && <Note>{note}</Note>}
      <Problem error={error} />
      <table class="deliveries">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {deliveries.length === 0 && (
            <tr>
              <td colSpan={6}>No deliveries.</td>
            </tr>
          )}
          {deliveries.map((d) => (
            <tr data-delivery-id={d.id}>
              <th scope="row">{d.event}</th>
              <td class="url">{d.url}</td>
              <td>
                <span class={`status ${d.status}`}>{d.status}</span>
              </td>
              <td>
                <Attempts delivery={d} />
              </td>
              <td>
                <Time iso={d.createdAt} />
              </td>
              <td>
                <button type="button" class="secondary" onClick={() => resend(d)}>
                  Resend
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
