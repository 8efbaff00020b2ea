// Team directory, console mode. C7 (runWorkflow) searches for postData "q"; C2 (run) answers the
// first match as name/value pairs. The number of searches is kept in a pal variable. A person
// who opens the console in a browser (C6) gets two buttons (pal.json's actions): everyone, and
// the teams; a console page has no field to type a search into.
import { columns, people, search } from './people.js';

export function runWorkflow(input, pal) {
  const query = (input.values.q ?? '').trim();
  const matches = search(query);
  const searches = Number(pal.vars.get('searches') ?? '0') + 1;
  pal.vars.set('searches', searches);
  return {
    messages: [
      {
        message:
          query === ''
            ? `${matches.length} people in the directory`
            : `${matches.length} people match "${query}"`,
        type: 'INFO',
      },
    ],
    data: matches.map((row) => ({ name: row[0], value: `${row[1]}, ${row[2]}, ${row[3]}` })),
  };
}

export function run(input) {
  const [first] = search(input.values.q);
  if (!first) throw new Error(`nobody matches "${input.values.q}"`);
  return Object.fromEntries(columns.map((column, i) => [column, first[i]]));
}

/** The page's "List everyone": one line a person, as the page shows messages. */
export function everyone() {
  return {
    messages: people.map(([name, team, office, phone]) => ({
      message: `${name}: ${team}, ${office}, ${phone}`,
      type: 'INFO',
    })),
  };
}

/** The page's "Count the people of each team". */
export function teams() {
  const counts = new Map();
  for (const [, team] of people) counts.set(team, (counts.get(team) ?? 0) + 1);
  return {
    messages: [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([team, n]) => ({
        message: `${team}: ${n} ${n === 1 ? 'person' : 'people'}`,
        type: 'INFO',
      })),
  };
}
