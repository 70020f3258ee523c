// Balance history: the ledger entries of one currency, newest first,
// each with the available balance after it.
import { useEffect, useState } from 'preact/hooks';
import { Field, Loading, Money, Pager, Problem, Time, useQuery } from './ui.jsx';

const historyQuery = `query History($currency: String!, $first: Int, $after: String) {
  balanceHistory(currency: $currency, first: $first, after: $after) {
    edges { node { id createdAt amount balanceAfter currency transactionReference description } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const balancesQuery = '{ balances { currency } }';
const pageSize = 25;

export function BalanceHistory() {
  const balances = useQuery(balancesQuery);
  const codes = (balances.data?.balances ?? []).map((b) => b.currency);
  const [currency, setCurrency] = useState('');
  useEffect(() => {
    if (!currency && codes.length) setCurrency(codes[0]);
  }, [codes.join()]);
  return (
    <>
      <Problem error={balances.error} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Choose a currency">
        <Field id="h-currency" label="Currency">
          <select id="h-currency" value={currency} onChange={(e) => setCurrency(e.currentTarget.value)}>
            {codes.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </Field>
      </form>
      {currency && <Entries key={currency} currency={currency} />}
    </>
  );
}

function Entries({ currency }) {
  const [cursors, setCursors] = useState([null]);
  const q = useQuery(historyQuery, { currency, first: pageSize, after: cursors[cursors.length - 1] });
  const conn = q.data?.balanceHistory;
  return (
    <>
      <Problem error={q.error} />
      <table>
        <caption>Balance history ({currency})</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Description</th>
            <th scope="col">Transaction</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col" class="num">
              Balance after
            </th>
          </tr>
        </thead>
        <tbody>
          {conn && conn.edges.length === 0 && (
            <tr>
              <td colSpan={5}>No entries in {currency}.</td>
            </tr>
          )}
          {(conn?.edges ?? []).map(({ node: e }) => (
            <tr>
              <th scope="row">
                <Time iso={e.createdAt} />
              </th>
              <td>{e.description}</td>
              <td>
                {e.transactionReference ? (
                  <a href={`#/transactions/${encodeURIComponent(e.transactionReference)}`}>{e.transactionReference}</a>
                ) : (
                  '—'
                )}
              </td>
              <td class={`num ${e.amount.startsWith('-') ? 'debit' : 'credit'}`}>
                <Money value={e.amount} currency={e.currency} />
              </td>
              <td class="num">
                <Money value={e.balanceAfter} currency={e.currency} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Loading loading={q.loading} />
      <Pager label="Balance history pages" cursors={cursors} setCursors={setCursors} pageInfo={conn?.pageInfo} />
    </>
  );
}
