// A body within the size limit that holds countless problems (hundreds of thousands of wrong
// items or attributes) is answered with its first problems, over real HTTP: not one message each,
// which made an answer many times the body's size and held every other request for seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startHarness, type Harness } from './harness.js';

const MORE = /^more problems not listed \(the first 20 are\)$/;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

describe('a body of countless problems', () => {
  it('JSON: 300,000 wrong items answer 400 with 20 of them named', async () => {
    const body = JSON.stringify({
      postData: Array.from({ length: 300_000 }, () => ({ name: 1, value: 2 })),
    });
    const answer = await h.http('/services/rest/console/leave-request/runWorkflow', {
      method: 'POST',
      accept: 'application/json',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const messages = expectError(answer, 400, 'INVALID_ARGUMENT', 'json');
    expect(messages).toHaveLength(21);
    expect(messages[0]).toContain('consoleContent.postData[0].name');
    expect(messages.at(-1)).toMatch(MORE);
    expect(answer.text.length).toBeLessThan(8 * 1024);
  });

  it('XML: 100,000 unexpected attributes answer 400 with 20 of them named', async () => {
    const attributes = Array.from({ length: 100_000 }, (_, i) => ` a${i}="1"`).join('');
    const answer = await h.http('/services/rest/console/leave-request/runWorkflow', {
      method: 'POST',
      accept: 'application/xml',
      headers: { 'content-type': 'application/xml' },
      body: `<consoleContent xmlns="urn:pal-workflow:pal"${attributes}/>`,
    });
    const messages = expectError(answer, 400, 'INVALID_ARGUMENT', 'xml');
    expect(messages).toHaveLength(21);
    expect(messages.at(-1)).toMatch(MORE);
    expect(answer.text.length).toBeLessThan(8 * 1024);
  });
});
