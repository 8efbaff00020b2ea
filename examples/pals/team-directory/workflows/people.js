// The directory's data: a module of its own, imported by the console and user modules.
export const columns = ['name', 'team', 'office', 'phone', 'skills'];

export const people = [
  ['Ada Lovelace', 'Analytics', 'London', '+44 20 7946 0101', 'statistics, modelling'],
  ['Alan Turing', 'Security', 'Manchester', '+44 161 496 0102', 'cryptography, testing'],
  ['Barbara Liskov', 'Platform', 'Boston', '+1 617 555 0103', 'architecture, distributed systems'],
  ['Charles Babbage', 'Finance', 'London', '+44 20 7946 0104', 'controlling, automation'],
  ['Dorothy Vaughan', 'Platform', 'Hampton', '+1 757 555 0105', 'fortran, mentoring'],
  ['Edsger Dijkstra', 'Platform', 'Eindhoven', '+31 40 555 0106', 'algorithms, reviews'],
  ['Frances Allen', 'Compilers', 'New York', '+1 212 555 0107', 'optimisation, compilers'],
  ['Grace Hopper', 'Compilers', 'Arlington', '+1 703 555 0108', 'compilers, teaching'],
  ['Hedy Lamarr', 'Radio', 'Vienna', '+43 1 555 0109', 'radio, patents'],
  ['Ivan Sutherland', 'Design', 'Salt Lake City', '+1 801 555 0110', 'graphics, interfaces'],
  ['Jean Sammet', 'Compilers', 'New York', '+1 212 555 0111', 'languages, standards'],
  ['Katherine Johnson', 'Analytics', 'Hampton', '+1 757 555 0112', 'orbital mechanics, statistics'],
  ['Ken Thompson', 'Platform', 'Murray Hill', '+1 908 555 0113', 'operating systems, go'],
  [
    'Leslie Lamport',
    'Platform',
    'Palo Alto',
    '+1 650 555 0114',
    'distributed systems, specifications',
  ],
  ['Margaret Hamilton', 'Security', 'Cambridge', '+1 617 555 0115', 'reliability, testing'],
  ['Niklaus Wirth', 'Compilers', 'Zurich', '+41 44 555 0116', 'languages, teaching'],
  ['Radia Perlman', 'Radio', 'Seattle', '+1 206 555 0117', 'networks, protocols'],
  ['Sophie Wilson', 'Design', 'Cambridge', '+44 1223 555 0118', 'processors, instruction sets'],
  ['Tim Berners-Lee', 'Design', 'Geneva', '+41 22 555 0119', 'hypertext, standards'],
  ['Whitfield Diffie', 'Security', 'Palo Alto', '+1 650 555 0120', 'cryptography, key exchange'],
];

/** People whose name, team, office or skills contain the query, ignoring case. */
export function search(query) {
  const q = (query ?? '').trim().toLowerCase();
  return q === ''
    ? people
    : people.filter((row) => row.some((cell) => cell.toLowerCase().includes(q)));
}
