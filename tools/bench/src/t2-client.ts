/**
 * T2's client, in a process of its own: a keep-alive HTTP/1.1 connection that asks for one page
 * at a time and reads each answer to its end. Node runs this file as it is (types stripped), with
 * nothing but node:http loaded, so its heap stays small: the bench's own process (tsx, autocannon,
 * pg, every part's results) paused for full garbage collections of 10 to 18 ms, and a request in
 * flight then was counted that much slower.
 *
 *   node t2-client.ts '{"url":…,"auth":…,"terms":[…],"rounds":N}'
 *
 * Prints one JSON line: every request's term, milliseconds and X-Total-Count (with "≥ " when the
 * count stopped at its cap).
 */
import http from 'node:http';

interface Plan {
  url: string;
  auth: string;
  terms: string[];
  rounds: number;
}

interface Answer {
  status: number;
  total: string;
}

const plan = JSON.parse(process.argv[2] ?? '') as Plan;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function search(term: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: plan.auth, accept: 'application/json', name: term };
    http
      .get(`${plan.url}/services/rest/transactions`, { agent, headers }, (response) => {
        response.resume();
        response.on('error', reject);
        response.on('end', () => {
          const relation = response.headers['x-total-count-relation'] === 'gte' ? '≥ ' : '';
          resolve({
            status: response.statusCode ?? 0,
            total: `${relation}${String(response.headers['x-total-count'])}`,
          });
        });
      })
      .on('error', reject);
  });
}

const samples: { term: string; ms: number; total: string }[] = [];
for (let round = 0; round < plan.rounds; round++) {
  for (const term of plan.terms) {
    const started = performance.now();
    const answer = await search(term);
    const ms = performance.now() - started;
    if (answer.status !== 200) throw new Error(`T2 answered ${answer.status}`);
    samples.push({ term, ms, total: answer.total });
  }
}
agent.destroy();
process.stdout.write(`${JSON.stringify(samples)}\n`);
