// Runs a query, a mutation and a query that fails validation with urql
// (@urql/core, default settings: short queries go as GET) and Apollo Client
// 4 (HttpLink, its defaults), and prints what each saw as JSON, with the
// HTTP methods and the media types of the answers.
// Usage: node clients.mjs GRAPHQL_URL API_KEY
import { Client, fetchExchange, gql as urqlGql } from '@urql/core';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

const [url, key] = process.argv.slice(2);

// recorder wraps fetch to note each request's method and answer's type.
function recorder() {
  const seen = [];
  const fetchFn = async (input, init = {}) => {
    const res = await fetch(input, init);
    seen.push({ method: init.method || 'GET', status: res.status, contentType: res.headers.get('content-type') });
    return res;
  };
  return { seen, fetchFn };
}

const me = 'query Me { me { id mode } }';
const invalid = 'query Invalid { me { nope } }';
const create = `mutation Create($in: CreateWalletInput!) { createWallet(input: $in) { walletReference } }`;
const walletInput = (ref) => ({
  walletReference: ref,
  compliance: {
    phone: '08012345678', firstname: 'Ada', lastname: 'Obi', email: 'ada@example.com',
    documents: [{ documentType: 'NIN', documentFile: 'https://x.example/nin.png', documentFileType: 'url', documentNo: '123' }],
  },
});
const codeOf = (errors) => (errors && errors[0] && errors[0].extensions ? errors[0].extensions.code : null);

async function urql() {
  const { seen, fetchFn } = recorder();
  const client = new Client({
    url,
    exchanges: [fetchExchange],
    fetch: fetchFn,
    fetchOptions: { headers: { 'X-API-KEY': key } },
  });
  const q = await client.query(urqlGql(me), {}, { requestPolicy: 'network-only' }).toPromise();
  const m = await client.mutation(urqlGql(create), { in: walletInput('urql-1') }).toPromise();
  const bad = await client.query(urqlGql(invalid), {}, { requestPolicy: 'network-only' }).toPromise();
  return {
    me: q.data && q.data.me, queryError: q.error ? q.error.message : null,
    wallet: m.data && m.data.createWallet, mutationError: m.error ? m.error.message : null,
    invalidCode: bad.error ? codeOf(bad.error.graphQLErrors) : null,
    requests: seen,
  };
}

async function apollo() {
  const { seen, fetchFn } = recorder();
  const client = new ApolloClient({
    link: new HttpLink({ uri: url, headers: { 'X-API-KEY': key }, fetch: fetchFn }),
    cache: new InMemoryCache(),
  });
  const q = await client.query({ query: gql(me), fetchPolicy: 'network-only' });
  const m = await client.mutate({ mutation: gql(create), variables: { in: walletInput('apollo-1') } });
  let invalidCode = null;
  try {
    await client.query({ query: gql(invalid), fetchPolicy: 'network-only' });
  } catch (err) {
    invalidCode = codeOf(err.errors);
  }
  return {
    me: q.data && q.data.me, queryError: q.error ? q.error.message : null,
    wallet: m.data && m.data.createWallet, mutationError: m.error ? m.error.message : null,
    invalidCode,
    requests: seen,
  };
}

console.log(JSON.stringify({ urql: await urql(), apollo: await apollo() }));
