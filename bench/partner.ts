// A stand-in partner for the intake benchmark, in its own process so its CPU is not the
// server's: accepts every lead after DELAY_MS and answers the shape the bench integration reads.
//   node --import tsx bench/partner.ts <port> <delayMs>
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const delayMs = Number(process.argv[3] ?? 0);
let n = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = `B${++n}`;
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"success":true,"data":{"id":"${id}","autologin_url":"https://broker.example/a/${id}"}}`);
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.send?.('ready'));
