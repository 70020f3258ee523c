// Transactions: the filtered, paged list with its CSV export, and one
// transaction's detail.
import { useEffect, useRef, useState } from 'preact/hooks';
import { gql } from './api.js';
import { dayStart, lower } from './format.js';
import { Field, Loading, Money, Pager, Problem, Time, useQuery } from './ui.jsx';
import { Deliveries } from './deliveries.jsx';

const listQuery = `query List($first: Int, $after: String, $filter: TransactionFilter) {
  transactions(first: $first, after: $after, filter: $filter) {
    edges { node { reference merchantReference type status amount currency fee createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const exportMutation = `mutation Export($filter: TransactionFilter) {
  createTransactionExport(filter: $filter) { url expiresAt }
}`;
const pageSize = 20;
const currencies = ['NGN', 'GHS', 'USD', 'USDT', 'USDC', 'BTC', 'ETH'];

// toFilter turns the form's values into a TransactionFilter, leaving out
// what is empty. The date range covers whole days of the browser's zone:
// From's day inclusive, To's day inclusive (createdTo is the next day's
// start, which the API takes as exclusive).
function toFilter(f) {
  const filter = {};
  if (f.type) filter.type = f.type;
  if (f.status) filter.status = f.status;
  if (f.currency) filter.currency = f.currency;
  if (f.from) filter.createdFrom = dayStart(f.from);
  if (f.to) filter.createdTo = dayStart(f.to, 1);
  if (f.search.trim()) filter.search = f.search.trim();
  return filter;
}

const blank = { type: '', status: '', currency: '', from: '', to: '', search: '' };

export function Transactions() {
  const [form, setForm] = useState(blank);
  const [filter, setFilter] = useState({});
  // cursors[i] is the after cursor of page i+1; page 1 has none.
  const [cursors, setCursors] = useState([null]);
  const after = cursors[cursors.length - 1];
  const list = useQuery(listQuery, { first: pageSize, after, filter });
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const apply = (e) => {
    e.preventDefault();
    setFilter(toFilter(form));
    setCursors([null]);
  };
  const clear = () => {
    setForm(blank);
    setFilter({});
    setCursors([null]);
  };
  const conn = list.data?.transactions;
  return (
    <>
      <form class="filters" onSubmit={apply} aria-label="Filter transactions">
        <Field id="f-type" label="Type">
          <select id="f-type" value={form.type} onChange={set('type')}>
            <option value="">Any</option>
            <option value="DEPOSIT">Deposit</option>
            <option value="WITHDRAWAL">Withdrawal</option>
            <option value="SWAP">Swap</option>
          </select>
        </Field>
        <Field id="f-status" label="Status">
          <select id="f-status" value={form.status} onChange={set('status')}>
            <option value="">Any</option>
            <option value="PENDING">Pending</option>
            <option value="SUCCESS">Success</option>
            <option value="FAILED">Failed</option>
            <option value="REFUNDED">Refunded</option>
          </select>
        </Field>
        <Field id="f-currency" label="Currency">
          <select id="f-currency" value={form.currency} onChange={set('currency')}>
            <option value="">Any</option>
            {currencies.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </Field>
        <Field id="f-from" label="From">
          <input id="f-from" type="date" value={form.from} onInput={set('from')} />
        </Field>
        <Field id="f-to" label="To">
          <input id="f-to" type="date" value={form.to} onInput={set('to')} />
        </Field>
        <Field id="f-search" label="Reference">
          <input
            id="f-search"
            type="search"
            value={form.search}
            onInput={set('search')}
            aria-describedby="f-search-hint"
          />
          <small id="f-search-hint" class="hint">
            The service's reference or yours, exactly.
          </small>
        </Field>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <ExportLink filter={filter} />
      <Problem error={list.error} />
      <table>
        <caption>Transactions</caption>
        <thead>
          <tr>
            <th scope="col">Reference</th>
            <th scope="col">Your reference</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col" class="num">
              Fee
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {conn && conn.edges.length === 0 && (
            <tr>
              <td colSpan={7}>No transactions match.</td>
            </tr>
          )}
          {(conn?.edges ?? []).map(({ node: t }) => (
            <tr>
              <th scope="row">
                <a href={`#/transactions/${encodeURIComponent(t.reference)}`}>{t.reference}</a>
              </th>
              <td>{t.merchantReference ?? '—'}</td>
              <td>{lower(t.type)}</td>
              <td>
                <span class={`status ${lower(t.status)}`}>{lower(t.status)}</span>
              </td>
              <td class="num">
                <Money value={t.amount} currency={t.currency} showCurrency />
              </td>
              <td class="num">
                <Money value={t.fee} currency={t.currency} />
              </td>
              <td>
                <Time iso={t.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Loading loading={list.loading} />
      <Pager label="Transaction pages" cursors={cursors} setCursors={setCursors} pageInfo={conn?.pageInfo} />
    </>
  );
}

// ExportLink is "Download CSV": a same-origin link carrying a one-time
// token (valid 60 s) for the filtered list. A token is fetched for each
// filter, again after each use and before it expires; a click on a
// spent or stale one fetches a fresh token first.
function ExportLink({ filter }) {
  const [token, setToken] = useState(null);
  const [error, setError] = useState(null);
  const timer = useRef(null);
  const vars = JSON.stringify(filter);
  const fetchToken = () => {
    clearTimeout(timer.current);
    return gql(exportMutation, { filter: JSON.parse(vars) }).then(
      ({ createTransactionExport: t }) => {
        setToken(t);
        setError(null);
        const left = new Date(t.expiresAt).getTime() - Date.now();
        timer.current = setTimeout(fetchToken, Math.max(left - 10_000, 5_000));
        return t;
      },
      (err) => {
        setToken(null);
        setError(err);
      },
    );
  };
  useEffect(() => {
    fetchToken();
    return () => clearTimeout(timer.current);
  }, [vars]);
  const onClick = (e) => {
    const fresh = token && new Date(token.expiresAt).getTime() - Date.now() > 3_000;
    if (fresh) {
      // The browser follows this token; the next click needs another.
      setTimeout(fetchToken, 0);
      return;
    }
    e.preventDefault();
    fetchToken().then((t) => t && location.assign(t.url));
  };
  return (
    <p class="export">
      <a href={token?.url ?? '#'} download="transactions.csv" onClick={onClick} class="button-link">
        Download CSV
      </a>{' '}
      <span class="hint">of the transactions the filters select (every page).</span>
      <Problem error={error} />
    </p>
  );
}

// The deliveries come without their attempts (the Developers page lists
// those): a transaction's events times their deliveries times the
// attempts would pass the service's limit on one operation's cost.
const detailQuery = `query Detail($reference: String!) {
  transaction(reference: $reference) {
    reference merchantReference type purpose status
    fromAmount fromCurrency amount currency amountCharged amountSettled toAmount toCurrency
    fee feeBearer trxRate rateId
    from to channel narration beneficiary destination rejectReason
    walletReference accountReference
    createdAt updatedAt settledAt
    events {
      id event createdAt
      transaction { status }
      deliveries {
        id event url status attemptCount lastStatusCode lastError createdAt completedAt
      }
    }
  }
}`;

function Row({ label, children }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children ?? '—'}</dd>
    </>
  );
}

// beneficiaryRows lists the beneficiary object (a JSON string) field by field.
function beneficiaryRows(raw) {
  if (!raw) return null;
  try {
    const b = JSON.parse(raw);
    return Object.entries(b).map(([k, v]) => <Row label={k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())}>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</Row>);
  } catch {
    return <Row label="Beneficiary">{raw}</Row>;
  }
}

export function TransactionDetail({ reference }) {
  const q = useQuery(detailQuery, { reference });
  const t = q.data?.transaction;
  if (q.loading && !q.data) return <Loading loading />;
  if (q.error) return <Problem error={q.error} />;
  if (!t) return <p>No transaction has the reference {reference}.</p>;
  const deliveries = t.events.flatMap((ev) => ev.deliveries);
  return (
    <>
      <p>
        <a href="#/transactions">Back to transactions</a>
      </p>
      <section aria-labelledby="amounts-h">
        <h2 id="amounts-h">Amounts</h2>
        <dl class="facts">
          <Row label="Type">{lower(t.type)}</Row>
          <Row label="Status">{lower(t.status)}</Row>
          <Row label="Amount"><Money value={t.amount} currency={t.currency} showCurrency /></Row>
          <Row label="From amount"><Money value={t.fromAmount} currency={t.fromCurrency} showCurrency /></Row>
          {t.toAmount && <Row label="To amount"><Money value={t.toAmount} currency={t.toCurrency} showCurrency /></Row>}
          <Row label="Amount charged"><Money value={t.amountCharged} currency={t.currency} showCurrency /></Row>
          <Row label="Amount settled"><Money value={t.amountSettled} currency={t.currency} showCurrency /></Row>
          <Row label="Fee"><Money value={t.fee} currency={t.currency} showCurrency /></Row>
          <Row label="Fee bearer">{lower(t.feeBearer)}</Row>
          <Row label="Rate">{t.trxRate}</Row>
          <Row label="Rate reference">{t.rateId}</Row>
          <Row label="Your reference">{t.merchantReference}</Row>
          <Row label="Purpose">{t.purpose}</Row>
          <Row label="Channel">{t.channel}</Row>
          <Row label="Narration">{t.narration || null}</Row>
          <Row label="Wallet">{t.walletReference}</Row>
          <Row label="Account">{t.accountReference}</Row>
          {t.rejectReason && <Row label="Reject reason">{t.rejectReason}</Row>}
          <Row label="Created"><Time iso={t.createdAt} /></Row>
          <Row label="Updated"><Time iso={t.updatedAt} /></Row>
          <Row label="Settled">{t.settledAt ? <Time iso={t.settledAt} /> : null}</Row>
        </dl>
      </section>
      <section aria-labelledby="beneficiary-h">
        <h2 id="beneficiary-h">Beneficiary</h2>
        {t.beneficiary ? <dl class="facts">{beneficiaryRows(t.beneficiary)}</dl> : <p>None: this transaction has no beneficiary.</p>}
      </section>
      <section aria-labelledby="history-h">
        <h2 id="history-h">Status history</h2>
        <ol class="timeline">
          <li>
            created <Time iso={t.createdAt} />
          </li>
          {t.events.map((ev) => (
            <li>
              {lower(ev.transaction.status)} <Time iso={ev.createdAt} />
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="events-h">
        <h2 id="events-h">Events</h2>
        <table>
          <caption>Events of {t.reference}</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Id</th>
              <th scope="col">Time</th>
              <th scope="col">Deliveries</th>
            </tr>
          </thead>
          <tbody>
            {t.events.length === 0 && (
              <tr>
                <td colSpan={4}>No events yet.</td>
              </tr>
            )}
            {t.events.map((ev) => (
              <tr>
                <th scope="row">{ev.event}</th>
                <td class="mono">{ev.id}</td>
                <td>
                  <Time iso={ev.createdAt} />
                </td>
                <td class="num">{ev.deliveries.length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="deliveries-h">
        <h2 id="deliveries-h">Webhook deliveries</h2>
        <Deliveries deliveries={deliveries} caption={`Webhook deliveries of ${t.reference}`} onChange={q.reload} />
      </section>
    </>
  );
}
