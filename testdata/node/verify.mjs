// Verifies a webhook delivery with the standardwebhooks library. Reads
// {"secret", "headers", "body"} as JSON on stdin; prints the verified payload.
import { Webhook } from 'standardwebhooks';

let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const { secret, headers, body } = JSON.parse(input);
  const wh = new Webhook(secret.replace(/^whsec_/, ''));
  try {
    const payload = wh.verify(body, headers);
    console.log(JSON.stringify(payload));
  } catch (e) {
    console.error('verification failed:', e.message);
    process.exit(1);
  }
});
