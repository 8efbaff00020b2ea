import { describe, expect, it } from 'vitest';
import { serviceResponse, userRunOptions } from './user-service.js';

describe('serviceResponse', () => {
  // Math.max(...lists) went past the engine's argument limit: a RangeError, answered as a 500.
  it('pages a response of more lists than a call takes arguments', () => {
    const dataLists: Record<string, { rows: string[][] }> = {};
    for (let i = 0; i < 200_000; i++) dataLists[String(i)] = { rows: [] };
    dataLists['7'] = { rows: Array.from({ length: 5 }, () => ['x']) };
    const options = userRunOptions('w', 'a', { paging: true, pageSize: 2, page: 1 });
    const response = serviceResponse({ payload: { dataLists } }, options);
    expect(response.totalPages).toBe(3);
    expect(response.payload!.dataLists!['7']!.rows).toHaveLength(2);
  });
});
