import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { describeFailure, signatureHeader } from './webhook-sender.js';

describe('signatureHeader', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  it('is what the standardwebhooks package computes', () => {
    const body = '{"type":"sso.created","timestamp":"2025-01-01T00:00:00.000Z","data":{}}';
    const timestamp = 1_735_689_600;
    expect(signatureHeader([secret], 'msg_1', timestamp, body)).toBe(
      new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body),
    );
  });

  it('holds one signature per secret, space-separated, current first', () => {
    const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const header = signatureHeader([secret, other], 'msg_2', 1, '{}');
    const [first, second] = header.split(' ');
    expect(first).toBe(signatureHeader([secret], 'msg_2', 1, '{}'));
    expect(second).toBe(signatureHeader([other], 'msg_2', 1, '{}'));
  });
});

describe('describeFailure', () => {
  const refused = (address: string) =>
    Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });

  it('names the first cause when every address of a name failed (an empty AggregateError)', () => {
    const all = new AggregateError([refused('::1:443'), refused('127.0.0.1:443')], '');
    expect(describeFailure(all)).toBe('connect ECONNREFUSED ::1:443');
  });

  it('puts the code in front when the message does not say it, and reads a time-out as such', () => {
    const refusedName = Object.assign(new Error('localhost resolves to 127.0.0.1'), {
      code: 'EADDRNOTPUBLIC',
    });
    expect(describeFailure(refusedName)).toBe('EADDRNOTPUBLIC: localhost resolves to 127.0.0.1');
    expect(describeFailure(refused('127.0.0.1:1'))).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(describeFailure(new DOMException('The operation timed out.', 'TimeoutError'))).toBe(
      'timed out',
    );
    expect(describeFailure(Object.assign(new Error(''), { name: 'SocketError' }))).toBe(
      'SocketError',
    );
  });
});
