// GraphiQL as the service serves it at GET /graphql. Everything it loads
// comes from the service itself: this bundle, its stylesheet, and the
// editor's web workers (their own bundles, see the *.worker.js entries).
import { useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { parse } from 'graphql';
import 'graphiql/style.css';
import './page.css';

// The editor (monaco) runs its language services in web workers; each is
// a bundle served under /graphiql/, never a CDN import. They carry the
// version the page gave this script (?v=...), so that browsers may cache
// them for good.
const version = new URL(document.currentScript.src).search;
globalThis.MonacoEnvironment = {
  getWorker(_id, label) {
    switch (label) {
      case 'json':
        return new Worker(`/graphiql/json.worker.js${version}`);
      case 'graphql':
        return new Worker(`/graphiql/graphql.worker.js${version}`);
      default:
        return new Worker(`/graphiql/editor.worker.js${version}`);
    }
  },
};

const defaultHeaders = JSON.stringify({ 'X-API-KEY': '' }, null, 2);

const defaultQuery = `# Paste your secret key (SECK_TEST_... or SECK_LIVE_...) into the
# X-API-KEY header below, then run this query with the play button.
{
  me {
    id
    mode
  }
}
`;

const noKeyMessage =
  'Paste your secret key into the X-API-KEY header below (Headers tab), then run a query: the schema and its docs load with it.';

// apiKey reads X-API-KEY (any letter case) from the headers editor's text,
// or '' while there is none or the text is not a JSON object yet.
function apiKey(headers) {
  let parsed;
  try {
    parsed = typeof headers === 'string' ? JSON.parse(headers || '{}') : headers;
  } catch {
    return '';
  }
  if (!parsed || typeof parsed !== 'object') return '';
  for (const [name, value] of Object.entries(parsed)) {
    if (name.toLowerCase() === 'x-api-key' && typeof value === 'string') return value.trim();
  }
  return '';
}

const wsScheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
const base = createGraphiQLFetcher({
  url: '/graphql',
  // Subscriptions use the same path over WebSocket; the headers editor's
  // X-API-KEY goes in connection_init (the toolkit adds the headers to
  // the connection parameters).
  subscriptionUrl: `${wsScheme}//${location.host}/graphql`,
});

// withDocument gives the fetcher the document of the query it runs. The
// toolkit picks WebSocket or HTTP from it, and the editor's own parse of
// the text lags behind: a subscription run right after it was typed or
// pasted would otherwise go as an HTTP POST.
function withDocument(params, opts) {
  try {
    return { ...opts, documentAST: parse(params.query) };
  } catch {
    return opts;
  }
}

// newFetcher answers, without asking the service, that a key is missing,
// rather than showing the service's 401 for the schema query and every run.
function newFetcher() {
  return (params, opts) => {
    if (!apiKey(opts?.headers)) {
      return Promise.resolve({ errors: [{ message: noKeyMessage }] });
    }
    return base(params, withDocument(params, opts));
  };
}

function App() {
  const [key, setKey] = useState('');
  // A new fetcher per key makes GraphiQL load the schema again with it.
  const fetcher = useMemo(() => newFetcher(), [key]);
  return (
    <div className="mp-page">
      {key === '' && (
        <div className="mp-no-key" role="alert" id="no-key">
          {noKeyMessage}
        </div>
      )}
      <div className="mp-graphiql">
        <GraphiQL
          fetcher={fetcher}
          defaultHeaders={defaultHeaders}
          initialHeaders={defaultHeaders}
          defaultQuery={defaultQuery}
          defaultEditorToolsVisibility="headers"
          onEditHeaders={(text) => setKey(apiKey(text))}
        />
      </div>
    </div>
  );
}

createRoot(document.getElementById('graphiql')).render(<App />);
