// The merchant dashboard: sign in with a secret key, then one page per
// part of the account, chosen by the URL's hash (#/transactions), so that
// every page has an address and the browser's back button works.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, gql, session } from './api.js';
import { Problem } from './ui.jsx';
import { Overview } from './overview.jsx';
import { Transactions, TransactionDetail } from './transactions.jsx';
import { BalanceHistory } from './history.jsx';
import { Wallets } from './wallets.jsx';
import { Developers } from './developers.jsx';
import { Sandbox } from './sandbox.jsx';
import './style.css';

const meQuery = '{ me { id name email mode } }';

const pages = [
  { path: 'overview', name: 'Overview', Page: Overview },
  { path: 'transactions', name: 'Transactions', Page: Transactions },
  { path: 'balance-history', name: 'Balance history', Page: BalanceHistory },
  { path: 'wallets', name: 'Wallets', Page: Wallets },
  { path: 'developers', name: 'Developers', Page: Developers },
  { path: 'sandbox', name: 'Sandbox', Page: Sandbox, testOnly: true },
];

function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) {
      setError(new ApiError([{ message: 'Enter your secret key.' }], 0));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const { me } = await gql(meQuery, {}, k);
      session.set(k);
      onSignedIn(me);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>merchantpay dashboard</h1>
      <form onSubmit={submit} aria-describedby="signin-help">
        <p id="signin-help">
          Sign in with a secret key, test or live. It stays in this browser tab until you sign out or close the tab.
        </p>
        <div class="field">
          <label for="secret-key">Secret key</label>
          <input
            id="secret-key"
            type="password"
            autocomplete="off"
            spellcheck={false}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            aria-invalid={error ? 'true' : undefined}
          />
        </div>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <Problem error={error} />
      </form>
    </main>
  );
}

function Shell({ me, onSignOut }) {
  const hash = useHash();
  const test = me.mode === 'TEST';
  const [, path = 'overview', ...rest] = (hash || '#/overview').split('/');
  const visible = pages.filter((p) => !p.testOnly || test);
  const page = visible.find((p) => p.path === path) ?? visible[0];
  const detail = page.path === 'transactions' && rest.length ? decodeURIComponent(rest.join('/')) : null;
  const title = detail ? `Transaction ${detail}` : page.name;
  const heading = useRef(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title} · merchantpay dashboard`;
    // Moving to another page puts the focus on its heading, as a page
    // load would, so that keyboard and screen reader users start there.
    if (!first.current) heading.current?.focus();
    first.current = false;
  }, [title]);
  const Page = page.Page;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), heading.current?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <p class="brand">merchantpay</p>
        <p class="who">
          {me.name} <span class="mode">{test ? 'test mode' : 'live mode'}</span>
        </p>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {test && (
        <div class="test-banner" role="note" aria-label="Test mode">
          Test mode: you are looking at sandbox data. Nothing here moves real money.
        </div>
      )}
      <nav aria-label="Dashboard">
        <ul>
          {visible.map((p) => (
            <li>
              <a href={`#/${p.path}`} aria-current={p === page ? 'page' : undefined}>
                {p.name}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {detail ? <TransactionDetail reference={detail} /> : <Page me={me} />}
      </main>
    </>
  );
}

function App() {
  const [me, setMe] = useState(null);
  const [checking, setChecking] = useState(!!session.key());
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!session.key()) return;
    gql(meQuery)
      .then(({ me }) => setMe(me))
      .catch((err) => {
        // A key that no longer works (rolled) signs the tab out.
        if (err.status === 401 || err.code === 'UNAUTHORIZED') session.clear();
        else setError(err);
      })
      .finally(() => setChecking(false));
  }, []);
  const signOut = () => {
    session.clear();
    setMe(null);
    location.hash = '';
  };
  if (checking) return <p role="status">Loading…</p>;
  if (error)
    return (
      <main id="main">
        <h1>merchantpay dashboard</h1>
        <Problem error={error} />
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </main>
    );
  return me ? <Shell me={me} onSignOut={signOut} /> : <SignIn onSignedIn={setMe} />;
}

render(<App />, document.getElementById('app'));
