// Subscribes with the reference graphql-ws client and prints each event as
// one JSON line. Usage: node subscribe.mjs WS_URL API_KEY COUNT [AFTER_ID]
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const [url, key, countArg, after] = process.argv.slice(2);
const want = Number(countArg || 1);
const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: { 'X-API-KEY': key },
  retryAttempts: 0,
});
let seen = 0;
const query = `subscription($after: ID) { events(after: $after) { id event createdAt transaction { reference status amount currency } } }`;
const timer = setTimeout(() => { console.error('timeout'); process.exit(2); }, 20000);
client.subscribe(
  { query, variables: { after: after || null } },
  {
    next: (msg) => {
      if (msg.errors) { console.error(JSON.stringify(msg.errors)); process.exit(1); }
      console.log(JSON.stringify(msg.data.events));
      if (++seen >= want) { clearTimeout(timer); client.dispose(); process.exit(0); }
    },
    error: (err) => { console.error('error', err && (err.message || err.reason || JSON.stringify(err))); process.exit(1); },
    complete: () => {},
  },
);
// Tell the Go test the subscription is being set up.
console.error('subscribing');
