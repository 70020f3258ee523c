// Small pieces every page uses: times, amounts, error and status
// messages, and a hook that runs a query.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { gql } from './api.js';
import { amount, localTime, utc } from './format.js';

// Time shows an ISO time in the browser's zone, with UTC on hover.
export function Time({ iso }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={utc(iso)}>
      {localTime(iso)}
    </time>
  );
}

// Money shows an amount as the API gave it, with its currency's decimals.
export function Money({ value, currency, showCurrency = false }) {
  const text = amount(value, currency);
  return (
    <span class="num">
      {text}
      {showCurrency && currency && text !== '—' ? ` ${currency}` : ''}
    </span>
  );
}

// Problem shows an error; the alert role makes screen readers say it.
export function Problem({ error }) {
  if (!error) return null;
  return (
    <div class="problem" role="alert">
      {error.errors?.length > 1 ? (
        <ul>
          {error.errors.map((e) => (
            <li>{e.message}</li>
          ))}
        </ul>
      ) : (
        error.message
      )}
    </div>
  );
}

// Note is a polite status message (a mutation's outcome).
export function Note({ children }) {
  return (
    <p class="note" role="status">
      {children}
    </p>
  );
}

// useQuery runs query with variables whenever they change and on
// reload(); it keeps the last data while a new answer is on its way.
export function useQuery(query, variables = {}) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const vars = JSON.stringify(variables);
  const seq = useRef(0);
  const reload = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    return gql(query, JSON.parse(vars)).then(
      (data) => n === seq.current && setState({ data, error: null, loading: false }),
      (error) => n === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [query, vars]);
  useEffect(() => {
    reload();
  }, [reload]);
  return { ...state, reload };
}

// Field is a labelled control: its label names it for everyone.
export function Field({ id, label, hint, children }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export const Loading = ({ loading }) =>
  loading ? (
    <p class="loading" role="status">
      Loading…
    </p>
  ) : null;

// Pager moves through a cursor-paginated list: cursors holds the after
// cursor of each page seen so far (null for the first), pageInfo the
// current page's.
export function Pager({ label, cursors, setCursors, pageInfo }) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
        Previous page
      </button>
      <span>Page {cursors.length}</span>
      <button
        type="button"
        class="secondary"
        disabled={!pageInfo?.hasNextPage}
        onClick={() => setCursors([...cursors, pageInfo.endCursor])}
      >
        Next page
      </button>
    </nav>
  );
}
