// Runs the GraphQL-over-HTTP audits of graphql-http (serverAudits) against
// the service and prints every result as JSON: [{id, name, status, reason}].
// status is ok, or error (a MUST failed), warn (a SHOULD) or notice (a MAY).
// Usage: node audit.mjs GRAPHQL_URL API_KEY
import { serverAudits } from 'graphql-http';

const [url, key] = process.argv.slice(2);
const fetchFn = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-API-KEY', key);
  return fetch(input, { ...init, headers });
};
const results = [];
for (const audit of serverAudits({ url, fetchFn })) {
  const r = await audit.fn();
  results.push({ id: r.id, name: r.name, status: r.status, reason: r.reason });
}
console.log(JSON.stringify(results));
