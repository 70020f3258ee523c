// The dashboard's only way to the service: GraphQL over HTTP (POST
// /graphql) with the secret key in the X-API-KEY header. The key lives in
// sessionStorage: it leaves the page only in that header and in the
// WebSocket's connection_init payload (live.js), never in a URL.

const storageKey = 'merchantpay.dashboard.key';

export const session = {
  key: () => sessionStorage.getItem(storageKey),
  set: (key) => sessionStorage.setItem(storageKey, key),
  clear: () => sessionStorage.removeItem(storageKey),
};

// ApiError carries the service's GraphQL errors: one message per error,
// and per bad input field when the service names them.
export class ApiError extends Error {
  constructor(errors, status) {
    super(errors.map((e) => e.message).join('; ') || `The service answered ${status}`);
    this.errors = errors;
    this.status = status;
    this.code = errors[0]?.extensions?.code;
  }
}

// gql runs one query or mutation with the session's key (or key, at sign
// in) and returns its data; any error rejects with an ApiError.
export async function gql(query, variables = {}, key = session.key()) {
  let res;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-API-KEY': key ?? '' },
      body: JSON.stringify({ query, variables }),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError([{ message: `The service cannot be reached (${e.message})` }], 0);
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    // handled below: no JSON is an error of its own
  }
  if (!body) throw new ApiError([], res.status);
  if (body.errors?.length) throw new ApiError(body.errors, res.status);
  if (!res.ok) throw new ApiError([], res.status);
  return body.data;
}

// idempotencyKey names one click of a mutation button, so that a retry
// of the same request is answered once.
export function idempotencyKey() {
  return 'dash_' + crypto.randomUUID();
}
