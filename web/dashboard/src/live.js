// A small client of the graphql-transport-ws protocol for the one
// subscription the dashboard uses, events(types, after). It reconnects
// after a dropped connection (with growing pauses) and resumes from the
// last event id it saw, so that no event is lost or shown twice.

const eventsQuery = `subscription Live($types: [EventType!], $after: ID) {
  events(types: $types, after: $after) {
    id event createdAt
    transaction { reference merchantReference type status amount currency fromAmount fromCurrency toAmount toCurrency }
  }
}`;

// Close codes after which trying again cannot help: the key is refused.
const final = new Set([4401, 4403]);

// subscribeEvents starts the subscription. onEvent(event) gets every
// event; onState(state, detail) hears "connecting", "live",
// "reconnecting" and "stopped" (with the reason). It returns stop().
// key is a function: each connection asks it for the tab's current key.
export function subscribeEvents({ key, types, after, onEvent, onState }) {
  let socket = null;
  let timer = null;
  let stopped = false;
  let failures = 0;
  let lastId = after ?? null;

  const connect = () => {
    onState('connecting');
    const url = location.origin.replace(/^http/, 'ws') + '/graphql';
    const ws = new WebSocket(url, 'graphql-transport-ws');
    const usedKey = key();
    socket = ws;
    const send = (m) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(m));
    ws.onopen = () => send({ type: 'connection_init', payload: { 'X-API-KEY': usedKey } });
    ws.onmessage = (m) => {
      let msg;
      try {
        msg = JSON.parse(m.data);
      } catch {
        return;
      }
      switch (msg.type) {
        case 'connection_ack':
          failures = 0;
          onState('live');
          send({
            id: 'events',
            type: 'subscribe',
            payload: { query: eventsQuery, variables: { types, after: lastId } },
          });
          break;
        case 'ping':
          send({ type: 'pong' });
          break;
        case 'next': {
          const ev = msg.payload?.data?.events;
          if (ev) {
            lastId = ev.id;
            onEvent(ev);
          } else if (msg.payload?.errors?.length) {
            onState('reconnecting', msg.payload.errors.map((e) => e.message).join('; '));
          }
          break;
        }
        case 'error':
          onState('reconnecting', (msg.payload ?? []).map((e) => e.message).join('; '));
          ws.close(1000);
          break;
        case 'complete':
          ws.close(1000);
          break;
      }
    };
    ws.onclose = (e) => {
      if (stopped || socket !== ws) return;
      // A refused key ends the feed, unless the tab has another key by
      // now (the keys were rolled from the Developers page).
      if (final.has(e.code) && key() !== usedKey) {
        timer = setTimeout(connect, 0);
        return;
      }
      if (final.has(e.code)) {
        stopped = true;
        onState('stopped', e.reason || `closed (${e.code})`);
        return;
      }
      failures++;
      const pause = Math.min(250 * 2 ** failures, 10_000);
      onState('reconnecting', e.reason || undefined);
      timer = setTimeout(connect, pause);
    };
  };
  connect();

  return () => {
    stopped = true;
    clearTimeout(timer);
    if (socket) socket.close(1000);
    socket = null;
  };
}
