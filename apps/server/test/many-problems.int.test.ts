// A body within the limits that holds countless problems (tens of thousands of wrong items or
// attributes) is answered with its first problems, over real HTTP: not one message each, which
// made an answer many times the body's size and held every other request for seconds. (A body of
// over 100,000 items is refused before it is parsed: form-flood.int.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startHarness, type Harness } from './harness.js';

const MORE = /^more problems not listed \(the first 20 are\)$/;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

describe('a body of countless problems', () => {
  it('JSON: 15,000 wrong items answer 400 with 20 of them named', async () => {
    const body = JSON.stringify({
      postData: Array.from({ length: 15_000 }, () => ({ name: 1, value: 2 })),
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

  it('XML: 50,000 unexpected attributes answer 400 with 20 of them named', async () => {
    const attributes = Array.from({ length: 50_000 }, (_, i) => ` a${i}="1"`).join('');
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
