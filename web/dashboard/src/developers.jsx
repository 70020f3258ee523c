// Developers: webhook endpoints and their deliveries, and the API keys.
import { useEffect, useRef, useState } from 'preact/hooks';
import { gql, idempotencyKey } from './api.js';
import { Field, Loading, Note, Problem, Time, useQuery } from './ui.jsx';
import { Deliveries } from './deliveries.jsx';
import { ApiKeys } from './apikeys.jsx';

const endpointsQuery = '{ webhookEndpoints { id url events enabled createdAt } }';
const deliveriesQuery = `query Deliveries($first: Int) {
  webhookDeliveries(first: $first) { edges { node {
    id event url status attemptCount lastStatusCode lastError createdAt completedAt
    attempts { number startedAt latencyMs statusCode error success }
  } } }
}`;
const createMutation = `mutation Create($input: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { endpoint { id url } secret }
}`;
const updateMutation = `mutation Update($id: ID!, $enabled: Boolean!) { updateWebhookEndpoint(id: $id, enabled: $enabled) { id enabled } }`;
const deleteMutation = `mutation Delete($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`;
const rollMutation = `mutation Roll($id: ID!) { rollWebhookSecret(id: $id) { id secret } }`;
const testMutation = `mutation Test($endpointId: ID!) { sendTestWebhook(endpointId: $endpointId) { id status } }`;

// A delivery's attempts happen after the action that caused it: the
// deliveries are asked again every two seconds while one is pending and
// for a while after an action here, and not otherwise (each look costs
// some of the key's rate limit, which the merchant's integration shares).
const pollEvery = 2_000;
const pollAfterAction = 30_000;

export function Developers() {
  const endpoints = useQuery(endpointsQuery);
  const deliveries = useQuery(deliveriesQuery, { first: 20 });
  const pollUntil = useRef(0);
  const list = (deliveries.data?.webhookDeliveries.edges ?? []).map((e) => e.node);
  const pending = list.some((d) => d.status === 'pending');
  useEffect(() => {
    const id = setInterval(() => {
      if (document.visibilityState === 'visible' && (pending || Date.now() < pollUntil.current)) deliveries.reload();
    }, pollEvery);
    return () => clearInterval(id);
  }, [deliveries.reload, pending]);
  const changed = () => {
    pollUntil.current = Date.now() + pollAfterAction;
    endpoints.reload();
    deliveries.reload();
  };
  return (
    <>
      <section aria-labelledby="endpoints-h">
        <h2 id="endpoints-h">Webhook endpoints</h2>
        <Problem error={endpoints.error} />
        <Endpoints list={endpoints.data?.webhookEndpoints ?? []} onChange={changed} />
        <Loading loading={endpoints.loading && !endpoints.data} />
        <CreateEndpoint onChange={changed} />
      </section>
      <section aria-labelledby="deliveries-h">
        <h2 id="deliveries-h">Webhook deliveries</h2>
        <p class="hint">
          The latest 20, newest first; refreshed while one is pending.{' '}
          <button type="button" class="secondary" onClick={deliveries.reload}>
            Refresh deliveries
          </button>
        </p>
        <Problem error={deliveries.error} />
        <Deliveries deliveries={list} caption="Webhook deliveries" onChange={changed} />
      </section>
      <ApiKeys />
    </>
  );
}

function Endpoints({ list, onChange }) {
  const [note, setNote] = useState(null);
  const [error, setError] = useState(null);
  const [deleting, setDeleting] = useState(null);
  const run = async (fn, done) => {
    setError(null);
    setNote(null);
    try {
      const data = await fn();
      setNote(done(data));
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      {note && <Note>{note}</Note>}
      <Problem error={error} />
      <table>
        <caption>Webhook endpoints</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.length === 0 && (
            <tr>
              <td colSpan={5}>No endpoints yet.</td>
            </tr>
          )}
          {list.map((ep) => (
            <tr data-endpoint-id={ep.id}>
              <th scope="row" class="url">
                {ep.url}
              </th>
              <td>{ep.events.length ? ep.events.join(', ') : 'all events'}</td>
              <td>{ep.enabled ? 'enabled' : 'disabled'}</td>
              <td>
                <Time iso={ep.createdAt} />
              </td>
              <td class="buttons">
                <button
                  type="button"
                  class="secondary"
                  onClick={() => run(() => gql(testMutation, { endpointId: ep.id }), () => `A test event is on its way to ${ep.url}.`)}
                >
                  Send test event
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    run(
                      () => gql(updateMutation, { id: ep.id, enabled: !ep.enabled }),
                      () => `${ep.url} is ${ep.enabled ? 'disabled' : 'enabled'}.`,
                    )
                  }
                >
                  {ep.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    run(
                      () => gql(rollMutation, { id: ep.id }),
                      (d) => <>New signing secret of {ep.url}, shown only now: <code>{d.rollWebhookSecret.secret}</code></>,
                    )
                  }
                >
                  Roll secret
                </button>
                {deleting === ep.id ? (
                  <span class="confirm" role="group" aria-label={`Delete ${ep.url}?`}>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => {
                        setDeleting(null);
                        run(() => gql(deleteMutation, { id: ep.id }), () => `${ep.url} is deleted.`);
                      }}
                    >
                      Confirm delete
                    </button>
                    <button type="button" class="secondary" onClick={() => setDeleting(null)}>
                      Keep it
                    </button>
                  </span>
                ) : (
                  <button type="button" class="secondary" onClick={() => setDeleting(ep.id)}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function CreateEndpoint({ onChange }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [created, setCreated] = useState(null);
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    setCreated(null);
    const names = events
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    try {
      const { createWebhookEndpoint: c } = await gql(createMutation, {
        input: { url: url.trim(), events: names, idempotencyKey: idempotencyKey() },
      });
      setCreated(c);
      setUrl('');
      setEvents('');
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-h">
      <h3 id="create-h">Add an endpoint</h3>
      <Field id="ep-url" label="Endpoint URL">
        <input id="ep-url" type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required />
      </Field>
      <Field id="ep-events" label="Events" hint="Comma separated, such as deposit.success, withdrawal.failed; empty for every event.">
        <input id="ep-events" value={events} onInput={(e) => setEvents(e.currentTarget.value)} aria-describedby="ep-events-hint" />
      </Field>
      <button type="submit">Create endpoint</button>
      <Problem error={error} />
      {created && (
        <Note>
          {created.endpoint.url} is created. Its signing secret, shown only now: <code>{created.secret}</code>
        </Note>
      )}
    </form>
  );
}
