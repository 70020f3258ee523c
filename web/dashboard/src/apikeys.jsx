// API keys: their prefixes and last use, and rolling them (with an
// optional overlap during which the old keys still work) after a
// confirmation step.
import { useRef, useState } from 'preact/hooks';
import { gql, session } from './api.js';
import { Field, Problem, Time, useQuery } from './ui.jsx';
import { lower } from './format.js';

const keysQuery = '{ apiKeys { id kind mode prefix createdAt lastUsedAt expiresAt } }';
const rollMutation = `mutation RollKeys($input: RollApiKeysInput) {
  rollApiKeys(input: $input) { secretKey publicKey oldKeysExpireAt }
}`;
const maxOverlap = 86_400;

export function ApiKeys() {
  const keys = useQuery(keysQuery);
  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">API keys</h2>
      <Problem error={keys.error} />
      <table>
        <caption>API keys</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Kind</th>
            <th scope="col">Mode</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Stops working</th>
          </tr>
        </thead>
        <tbody>
          {(keys.data?.apiKeys ?? []).map((k) => (
            <tr>
              <th scope="row" class="mono">
                {k.prefix}…
              </th>
              <td>{k.kind}</td>
              <td>{lower(k.mode)}</td>
              <td>
                <Time iso={k.createdAt} />
              </td>
              <td>{k.lastUsedAt ? <Time iso={k.lastUsedAt} /> : 'never'}</td>
              <td>{k.expiresAt ? <Time iso={k.expiresAt} /> : 'not set'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">Last use is recorded at most once a minute per key.</p>
      <RollKeys onRolled={keys.reload} />
    </section>
  );
}

function RollKeys({ onRolled }) {
  const [overlap, setOverlap] = useState('0');
  const [confirming, setConfirming] = useState(false);
  const [rolled, setRolled] = useState(null);
  const [error, setError] = useState(null);
  const confirmButton = useRef(null);
  const seconds = Number(overlap);
  const valid = /^\d+$/.test(overlap.trim()) && seconds <= maxOverlap;
  const ask = (e) => {
    e.preventDefault();
    setError(null);
    setRolled(null);
    if (!valid) {
      setError({ message: `Overlap: a whole number of seconds from 0 to ${maxOverlap} (24 hours).` });
      return;
    }
    setConfirming(true);
    setTimeout(() => confirmButton.current?.focus(), 0);
  };
  const roll = async () => {
    setConfirming(false);
    try {
      const { rollApiKeys: r } = await gql(rollMutation, { input: { overlapSeconds: seconds } });
      // This tab goes on with the new secret key: the old one stops
      // working now or when the overlap ends.
      session.set(r.secretKey);
      setRolled(r);
      onRolled();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card" onSubmit={ask} aria-labelledby="roll-h">
      <h3 id="roll-h">Roll keys</h3>
      <p>Rolling replaces this mode's secret and public keys. Integrations must change to the new keys.</p>
      <Field id="roll-overlap" label="Overlap in seconds" hint="How long the old keys keep working: 0 stops them at once; at most 86400 (24 hours).">
        <input
          id="roll-overlap"
          inputMode="numeric"
          value={overlap}
          onInput={(e) => setOverlap(e.currentTarget.value)}
          aria-describedby="roll-overlap-hint"
          aria-invalid={valid ? undefined : 'true'}
        />
      </Field>
      {!confirming && <button type="submit">Roll keys</button>}
      {confirming && (
        <div class="confirm" role="alertdialog" aria-labelledby="roll-confirm-text">
          <p id="roll-confirm-text">
            {seconds === 0
              ? 'The current keys will stop working at once, this tab switching to the new secret key.'
              : `The current keys will keep working for ${seconds} seconds more, then stop.`}{' '}
            Roll the keys?
          </p>
          <button type="button" class="danger" ref={confirmButton} onClick={roll}>
            Confirm roll
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      <Problem error={error} />
      {rolled && (
        <div class="note" role="status">
          <p>The keys are rolled. Copy them now: they are shown only once. This tab now uses the new secret key.</p>
          <dl class="facts">
            <dt>New secret key</dt>
            <dd>
              <code id="new-secret-key">{rolled.secretKey}</code>
            </dd>
            <dt>New public key</dt>
            <dd>
              <code id="new-public-key">{rolled.publicKey}</code>
            </dd>
            <dt>Old keys stop working</dt>
            <dd>{rolled.oldKeysExpireAt ? <Time iso={rolled.oldKeysExpireAt} /> : 'already stopped'}</dd>
          </dl>
        </div>
      )}
    </form>
  );
}
