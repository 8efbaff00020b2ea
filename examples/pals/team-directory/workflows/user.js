// Team directory for U1 (POST /user/runWorkflow?workflow=team-directory&action=search): the
// matches as a DataList, which the service pages by the request's paging, page and pageSize.
import { columns, search as find } from './people.js';

export function search(input) {
  const query = input.values.q ?? '';
  const rows = find(query);
  return {
    successMessage: `${rows.length} people match "${query}"`,
    payload: { dataLists: { people: { name: 'people', columns, rows } } },
    listBindings: { name: 'people' },
  };
}

export function teams() {
  const counts = {};
  for (const row of find('')) counts[row[1]] = String(Number(counts[row[1]] ?? 0) + 1);
  return { payload: { data: counts } };
}
