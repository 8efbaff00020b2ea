import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from './webhook-sender.js';

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
