// Team directory, console mode. C7 (runWorkflow) searches for postData "q"; C2 (run) answers the
// first match as name/value pairs. The number of searches is kept in a pal variable.
import { columns, search } from './people.js';

export function runWorkflow(input, pal) {
  const matches = search(input.values.q);
  const searches = Number(pal.vars.get('searches') ?? '0') + 1;
  pal.vars.set('searches', searches);
  return {
    messages: [
      { message: `${matches.length} people match "${input.values.q ?? ''}"`, type: 'INFO' },
    ],
    data: matches.map((row) => ({ name: row[0], value: `${row[1]}, ${row[2]}, ${row[3]}` })),
  };
}

export function run(input) {
  const [first] = search(input.values.q);
  if (!first) throw new Error(`nobody matches "${input.values.q}"`);
  return Object.fromEntries(columns.map((column, i) => [column, first[i]]));
}
