// Wallets with their virtual accounts, the indicative rates, and a quote
// calculator (createRate).
import { useState } from 'preact/hooks';
import { gql, idempotencyKey } from './api.js';
import { Field, Loading, Money, Pager, Problem, Time, useQuery } from './ui.jsx';
import { lower } from './format.js';

const walletsQuery = `query Wallets($first: Int, $after: String) {
  wallets(first: $first, after: $after) {
    edges { node {
      walletReference fullName createdAt compliance { email phone }
      accounts { accountReference accountType accountNumber accountName bankName currency amount expiresAt }
    } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const ratesQuery = `{ rates { pair
  buy { fromCurrency toCurrency rate fee feeType refreshIn }
  sell { fromCurrency toCurrency rate fee feeType refreshIn } } }`;
const quoteMutation = `mutation Quote($input: CreateRateInput!) {
  createRate(input: $input) { reference fromCurrency toCurrency fromAmount toAmount rate fee feeType expiresAt }
}`;
const pageSize = 20;

export function Wallets() {
  const [cursors, setCursors] = useState([null]);
  const q = useQuery(walletsQuery, { first: pageSize, after: cursors[cursors.length - 1] });
  const conn = q.data?.wallets;
  return (
    <>
      <section aria-labelledby="wallets-h">
        <h2 id="wallets-h">Wallets and virtual accounts</h2>
        <Problem error={q.error} />
        <table>
          <caption>Wallets</caption>
          <thead>
            <tr>
              <th scope="col">Wallet</th>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Created</th>
              <th scope="col">Virtual accounts</th>
            </tr>
          </thead>
          <tbody>
            {conn && conn.edges.length === 0 && (
              <tr>
                <td colSpan={5}>No wallets yet.</td>
              </tr>
            )}
            {(conn?.edges ?? []).map(({ node: w }) => (
              <tr>
                <th scope="row" class="mono">
                  {w.walletReference}
                </th>
                <td>{w.fullName}</td>
                <td>{w.compliance.email}</td>
                <td>
                  <Time iso={w.createdAt} />
                </td>
                <td>
                  {w.accounts.length === 0 ? (
                    'none'
                  ) : (
                    <ul class="accounts">
                      {w.accounts.map((a) => (
                        <li>
                          <span class="mono">{a.accountNumber}</span> {a.bankName}, {a.accountName} ({lower(a.accountType)}, {a.currency}
                          {a.amount ? <>, <Money value={a.amount} currency={a.currency} showCurrency /></> : null}
                          {a.expiresAt ? <>, expires <Time iso={a.expiresAt} /></> : null})
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <Loading loading={q.loading} />
        <Pager label="Wallet pages" cursors={cursors} setCursors={setCursors} pageInfo={conn?.pageInfo} />
      </section>
      <Rates />
    </>
  );
}

function Rates() {
  const q = useQuery(ratesQuery);
  const rates = q.data?.rates ?? [];
  return (
    <section aria-labelledby="rates-h">
      <h2 id="rates-h">Rates and quotes</h2>
      <Problem error={q.error} />
      <table>
        <caption>Indicative rates</caption>
        <thead>
          <tr>
            <th scope="col">Pair</th>
            <th scope="col" class="num">
              Buy
            </th>
            <th scope="col" class="num">
              Sell
            </th>
            <th scope="col">Fee (buy / sell)</th>
            <th scope="col" class="num">
              Refresh in (s)
            </th>
          </tr>
        </thead>
        <tbody>
          {q.data && rates.length === 0 && (
            <tr>
              <td colSpan={5}>No pairs are enabled.</td>
            </tr>
          )}
          {rates.map((r) => (
            <tr>
              <th scope="row">{r.pair}</th>
              <td class="num">{r.buy.rate}</td>
              <td class="num">{r.sell.rate}</td>
              <td>
                {r.buy.fee} {r.buy.feeType === 'PERCENTAGE' ? '%' : 'flat'} / {r.sell.fee} {r.sell.feeType === 'PERCENTAGE' ? '%' : 'flat'}
              </td>
              <td class="num">{Math.min(r.buy.refreshIn, r.sell.refreshIn)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <QuoteCalculator rates={rates} />
    </section>
  );
}

// QuoteCalculator asks the service for a swap quote (createRate): what
// the given amount of one currency buys of another, fee included.
function QuoteCalculator({ rates }) {
  const pairs = rates.flatMap((r) => [r.buy, r.sell]).map((d) => `${d.fromCurrency}>${d.toCurrency}`);
  const [dir, setDir] = useState('');
  const [side, setSide] = useState('from');
  const [value, setValue] = useState('');
  const [quote, setQuote] = useState(null);
  const [error, setError] = useState(null);
  const chosen = dir || pairs[0] || '';
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const [fromCurrency, toCurrency] = chosen.split('>');
    const input = { fromCurrency, toCurrency, idempotencyKey: idempotencyKey() };
    input[side === 'from' ? 'fromAmount' : 'toAmount'] = value.trim();
    try {
      const { createRate } = await gql(quoteMutation, { input });
      setQuote(createRate);
    } catch (err) {
      setQuote(null);
      setError(err);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="quote-h">
      <h3 id="quote-h">Quote calculator</h3>
      <Field id="q-pair" label="Direction">
        <select id="q-pair" value={chosen} onChange={(e) => setDir(e.currentTarget.value)}>
          {pairs.map((p) => (
            <option value={p}>{p.replace('>', ' to ')}</option>
          ))}
        </select>
      </Field>
      <fieldset>
        <legend>The amount is</legend>
        <label>
          <input type="radio" name="q-side" value="from" checked={side === 'from'} onChange={() => setSide('from')} /> what I pay
        </label>
        <label>
          <input type="radio" name="q-side" value="to" checked={side === 'to'} onChange={() => setSide('to')} /> what I receive
        </label>
      </fieldset>
      <Field id="q-amount" label="Amount">
        <input id="q-amount" inputMode="decimal" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
      </Field>
      <button type="submit" disabled={!chosen}>
        Get quote
      </button>
      <Problem error={error} />
      {quote && (
        <div role="status" aria-label="Quote">
        <dl class="facts">
          <dt>You pay</dt>
          <dd>
            <Money value={quote.fromAmount} currency={quote.fromCurrency} showCurrency />
          </dd>
          <dt>You receive</dt>
          <dd>
            <Money value={quote.toAmount} currency={quote.toCurrency} showCurrency />
          </dd>
          <dt>Rate</dt>
          <dd>{quote.rate}</dd>
          <dt>Fee</dt>
          <dd>
            <Money value={quote.fee} currency={quote.toCurrency} showCurrency />
          </dd>
          <dt>Quote reference</dt>
          <dd class="mono">{quote.reference}</dd>
          <dt>Valid until</dt>
          <dd>
            <Time iso={quote.expiresAt} />
          </dd>
        </dl>
        </div>
      )}
    </form>
  );
}
