// Overview: balances, today's volume, and the live activity feed.
import { useEffect, useRef, useState } from 'preact/hooks';
import { gql, session } from './api.js';
import { subscribeEvents } from './live.js';
import { Loading, Money, Problem, Time, useQuery } from './ui.jsx';

const balancesQuery = '{ balances { currency available pending updatedAt } }';
const volumeQuery = '{ volumeToday { currency incoming outgoing count } }';
const recentQuery = `{ events(first: 20) { edges { node {
  id event createdAt
  transaction { reference merchantReference type status amount currency fromAmount fromCurrency toAmount toCurrency }
} } } }`;

// The feed shows money arriving, swaps done and withdrawals as they move.
const feedTypes = ['DEPOSIT_SUCCESS', 'SWAP_SUCCESS', 'WITHDRAWAL_PENDING', 'WITHDRAWAL_SUCCESS', 'WITHDRAWAL_FAILED'];
const feedNames = new Set(feedTypes.map((t) => t.toLowerCase().replace('_', '.')));
const feedLength = 50;

export function Overview() {
  const balances = useQuery(balancesQuery);
  const volume = useQuery(volumeQuery);
  // An event changes balances and volume: both are asked again, at most
  // once per half second however many events arrive.
  const refresh = useRef(null);
  const onActivity = () => {
    clearTimeout(refresh.current);
    refresh.current = setTimeout(() => {
      balances.reload();
      volume.reload();
    }, 500);
  };
  useEffect(() => () => clearTimeout(refresh.current), []);
  // The service lists every currency; the table, those that moved today.
  const moved = (volume.data?.volumeToday ?? []).filter((v) => v.count > 0);
  return (
    <>
      <section aria-labelledby="balances-h">
        <h2 id="balances-h">Balances</h2>
        <Problem error={balances.error} />
        <table>
          <caption>Balances</caption>
          <thead>
            <tr>
              <th scope="col">Currency</th>
              <th scope="col" class="num">
                Available
              </th>
              <th scope="col" class="num">
                Pending
              </th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {(balances.data?.balances ?? []).map((b) => (
              <tr>
                <th scope="row">{b.currency}</th>
                <td class="num">
                  <Money value={b.available} currency={b.currency} />
                </td>
                <td class="num">
                  <Money value={b.pending} currency={b.currency} />
                </td>
                <td>
                  <Time iso={b.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <Loading loading={balances.loading && !balances.data} />
      </section>
      <section aria-labelledby="volume-h">
        <h2 id="volume-h">Today's volume</h2>
        <p class="hint">Since midnight UTC.</p>
        <Problem error={volume.error} />
        {volume.data && (
          <table>
            <caption>Today's volume</caption>
            <thead>
              <tr>
                <th scope="col">Currency</th>
                <th scope="col" class="num">
                  In
                </th>
                <th scope="col" class="num">
                  Out
                </th>
                <th scope="col" class="num">
                  Transactions
                </th>
              </tr>
            </thead>
            <tbody>
              {moved.length === 0 && (
                <tr>
                  <td colSpan={4}>No transactions today.</td>
                </tr>
              )}
              {moved.map((v) => (
                <tr>
                  <th scope="row">{v.currency}</th>
                  <td class="num">
                    <Money value={v.incoming} currency={v.currency} />
                  </td>
                  <td class="num">
                    <Money value={v.outgoing} currency={v.currency} />
                  </td>
                  <td class="num">{v.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <LiveActivity onActivity={onActivity} />
    </>
  );
}

const stateText = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Connection lost; reconnecting…',
  stopped: 'Stopped',
};

// LiveActivity lists the latest events, then every new one as it
// happens (a graphql-ws subscription resumed after the newest event it
// has, so that a dropped connection loses nothing).
function LiveActivity({ onActivity }) {
  const [items, setItems] = useState([]);
  const [state, setState] = useState({ state: 'connecting' });
  const [error, setError] = useState(null);
  const activity = useRef(onActivity);
  activity.current = onActivity;
  useEffect(() => {
    let stop = () => {};
    let gone = false;
    gql(recentQuery)
      .then(({ events }) => {
        if (gone) return;
        const nodes = events.edges.map((e) => e.node);
        setItems(nodes.filter((n) => feedNames.has(n.event)).slice(0, feedLength));
        stop = subscribeEvents({
          key: session.key,
          types: feedTypes,
          after: nodes[0]?.id ?? null,
          onEvent: (ev) => {
            setItems((old) => (old.some((o) => o.id === ev.id) ? old : [ev, ...old].slice(0, feedLength)));
            activity.current();
          },
          onState: (s, detail) => setState({ state: s, detail }),
        });
      })
      .catch((err) => !gone && setError(err));
    return () => {
      gone = true;
      stop();
    };
  }, []);
  return (
    <section aria-labelledby="live-h" class="live" aria-live="polite" aria-relevant="additions">
      <div class="live-head">
        <h2 id="live-h">Live activity</h2>
        <p class={`live-state ${state.state}`} aria-live="off">
          {stateText[state.state]}
          {state.detail ? `: ${state.detail}` : ''}
        </p>
      </div>
      <Problem error={error} />
      <ol class="feed" aria-labelledby="live-h">
        {items.length === 0 && <li class="empty">Nothing yet: deposits, swaps and withdrawals appear here as they happen.</li>}
        {items.map((ev) => (
          <li key={ev.id} data-event-id={ev.id}>
            <span class={`event ${ev.event.split('.')[1]}`}>{ev.event}</span>{' '}
            <a href={`#/transactions/${encodeURIComponent(ev.transaction.reference)}`}>{ev.transaction.reference}</a>{' '}
            <Money value={ev.transaction.amount} currency={ev.transaction.currency} showCurrency />{' '}
            <Time iso={ev.createdAt} />
          </li>
        ))}
      </ol>
    </section>
  );
}
