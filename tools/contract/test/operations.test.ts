/**
 * Operation changes, each a fixture pair of operations.yaml: what the operation model classifies
 * (ids, forms, bodies, responses) and what api-smart-diff classifies in the bundle (operations,
 * parameters and headers, media types, response headers, security).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ChangeBump } from '../src/change.js';
import { diffContracts } from '../src/diff.js';
import { loadContract } from '../src/load.js';
import { makePair, type Edit } from './pairs.js';

const OPS = 'schemas/openapi/operations.yaml';

const GET_PAL_PARAMS = `      parameters:
        - name: id
          in: path
          required: true
          description: Id of the pal.
          schema:
            type: string
            maxLength: 200
      responses:
        '200':
          description: The pal.`;

const CASES: {
  name: string;
  edits: Edit[];
  bump: ChangeBump;
  kind: string;
  path: string;
}[] = [
  {
    name: 'a new optional query parameter',
    edits: [
      {
        file: OPS,
        from: GET_PAL_PARAMS,
        to: GET_PAL_PARAMS.replace(
          '      responses:',
          '        - name: verbose\n          in: query\n          required: false\n          schema:\n            type: boolean\n      responses:',
        ),
      },
    ],
    bump: 'minor',
    kind: 'openapi-add',
    path: 'GET /services/rest/pals/{id} parameters[query verbose]',
  },
  {
    name: 'a new required query parameter',
    edits: [
      {
        file: OPS,
        from: GET_PAL_PARAMS,
        to: GET_PAL_PARAMS.replace(
          '      responses:',
          '        - name: verbose\n          in: query\n          required: true\n          schema:\n            type: boolean\n      responses:',
        ),
      },
    ],
    bump: 'major',
    kind: 'openapi-add',
    path: 'GET /services/rest/pals/{id} parameters[query verbose]',
  },
  {
    name: 'a lower maxLength on a path id',
    edits: [
      {
        file: OPS,
        from: GET_PAL_PARAMS,
        to: GET_PAL_PARAMS.replace('maxLength: 200', 'maxLength: 50'),
      },
    ],
    bump: 'major',
    kind: 'openapi-replace',
    path: 'GET /services/rest/pals/{id} parameters[path id] schema maxLength',
  },
  {
    name: 'a higher maxLength on a path id',
    edits: [
      {
        file: OPS,
        from: GET_PAL_PARAMS,
        to: GET_PAL_PARAMS.replace('maxLength: 200', 'maxLength: 500'),
      },
    ],
    bump: 'minor',
    kind: 'openapi-replace',
    path: 'GET /services/rest/pals/{id} parameters[path id] schema maxLength',
  },
  {
    name: 'a search header made required',
    edits: [
      {
        file: OPS,
        from: 'PalSearchName:\n      name: name\n      in: header\n      required: false',
        to: 'PalSearchName:\n      name: name\n      in: header\n      required: true',
      },
    ],
    bump: 'major',
    kind: 'openapi-add',
    path: 'GET /services/rest/pals parameters[header name] required',
  },
  {
    // A minor to the wire (api-smart-diff's openapi-add), a major to servers built on the skeleton.
    name: 'an operation added',
    edits: [
      {
        file: OPS,
        from: '\n  /services/rest/pals/{palId}/token:\n',
        to: `\n  /services/rest/pals/{id}/again:\n    get:\n      operationId: getPalAgain\n      x-spec-id: P9\n      tags:\n        - pals\n      summary: Get a pal again\n${GET_PAL_PARAMS}\n          content:\n            application/json:\n              schema:\n                $ref: '#/components/schemas/PalInfo'\n\n  /services/rest/pals/{palId}/token:\n`,
      },
    ],
    bump: 'major',
    kind: 'operation-added',
    path: 'GET /services/rest/pals/{id}/again',
  },
  {
    name: 'an operation removed',
    edits: [
      { file: OPS, from: /\n {2}\/services\/rest\/pals\/\{id\}:\n[\s\S]*?(?=\n {2}\/)/, to: '' },
    ],
    bump: 'major',
    kind: 'openapi-remove',
    path: '/services/rest/pals/{id}',
  },
  {
    name: 'an operation renamed (operationId)',
    edits: [{ file: OPS, from: 'operationId: getPal\n', to: 'operationId: readPal\n' }],
    bump: 'major',
    kind: 'operation-id-changed',
    path: 'GET /services/rest/pals/{id}',
  },
  {
    name: 'a response media type removed',
    edits: [
      {
        file: OPS,
        from: "            text/plain:\n              schema:\n                type: boolean\n        '400':",
        to: "        '400':",
      },
    ],
    bump: 'major',
    kind: 'openapi-remove',
    path: 'text/plain',
  },
  {
    name: 'a response header removed',
    edits: [
      {
        file: OPS,
        from: '            X-Total-Count:\n              description: The number of matches of the search (all pages).\n              schema:\n                type: integer\n                format: int32\n                minimum: 0\n',
        to: '',
      },
    ],
    bump: 'major',
    kind: 'openapi-remove',
    path: 'GET /services/rest/console/consolePalList responses 200 headers',
  },
  {
    name: 'a new optional form field',
    edits: [
      {
        file: OPS,
        from: 'description: SSO ID of the user who gets access.\n',
        to: 'description: SSO ID of the user who gets access.\n                note:\n                  type: string\n',
      },
    ],
    bump: 'minor',
    kind: 'form-field-added-optional',
    path: 'form field note',
  },
  {
    name: 'a form field made required',
    edits: [
      {
        file: OPS,
        from: '              required:\n                - ssoId\n',
        to: '              required:\n                - ssoId\n                - useEnterpriseProfile\n',
      },
    ],
    bump: 'major',
    kind: 'form-field-now-required',
    path: 'form field useEnterpriseProfile',
  },
  {
    name: 'a response type changed',
    edits: [
      {
        file: OPS,
        from: "          description: The pal.\n          headers:\n            RateLimit-Policy:\n              $ref: '#/components/headers/RateLimit-Policy'\n            RateLimit:\n              $ref: '#/components/headers/RateLimit'\n          content:\n            application/xml:\n              schema:\n                $ref: '#/components/schemas/PalInfo'",
        to: "          description: The pal.\n          headers:\n            RateLimit-Policy:\n              $ref: '#/components/headers/RateLimit-Policy'\n            RateLimit:\n              $ref: '#/components/headers/RateLimit'\n          content:\n            application/xml:\n              schema:\n                $ref: '#/components/schemas/TransactionInfo'",
      },
      {
        file: OPS,
        from: "            application/json:\n              schema:\n                $ref: '#/components/schemas/PalInfo'\n        '400':",
        to: "            application/json:\n              schema:\n                $ref: '#/components/schemas/TransactionInfo'\n        '400':",
      },
    ],
    bump: 'major',
    kind: 'response-changed',
    path: 'GET /services/rest/pals/{id} responses.200',
  },
  {
    name: 'security removed from the API (old clients still get in)',
    edits: [{ file: OPS, from: 'security:\n  - basic: []\n', to: '' }],
    bump: 'minor',
    kind: 'openapi-remove',
    path: 'security',
  },
  {
    name: 'another security scheme required',
    edits: [
      { file: OPS, from: 'security:\n  - basic: []\n', to: 'security:\n  - bearer: []\n' },
      {
        file: OPS,
        from: '  securitySchemes:\n',
        to: '  securitySchemes:\n    bearer:\n      type: http\n      scheme: bearer\n',
      },
    ],
    bump: 'major',
    kind: 'openapi-',
    path: 'security',
  },
  {
    name: "one media type's response schema changed",
    edits: [
      {
        file: OPS,
        from: "          description: The pal.\n          headers:\n            RateLimit-Policy:\n              $ref: '#/components/headers/RateLimit-Policy'\n            RateLimit:\n              $ref: '#/components/headers/RateLimit'\n          content:\n            application/xml:\n              schema:\n                $ref: '#/components/schemas/PalInfo'",
        to: "          description: The pal.\n          headers:\n            RateLimit-Policy:\n              $ref: '#/components/headers/RateLimit-Policy'\n            RateLimit:\n              $ref: '#/components/headers/RateLimit'\n          content:\n            application/xml:\n              schema:\n                $ref: '#/components/schemas/TransactionInfo'",
      },
    ],
    bump: 'major',
    kind: 'media-schema-changed',
    path: 'GET /services/rest/pals/{id} responses 200 application/xml',
  },
  {
    name: "an operation's summary",
    edits: [{ file: OPS, from: 'summary: Get a pal\n', to: 'summary: Read one pal\n' }],
    bump: 'patch',
    kind: 'openapi-replace',
    path: 'GET /services/rest/pals/{id} summary',
  },
];

const GET_PAL_AT = '  /services/rest/pals/{id}:\n    get:\n      operationId: getPal\n';
const MOVED = '  /services/rest/pals/one/{id}:\n    get:\n      operationId: getPal\n';

CASES.push(
  {
    name: "an operation's path, its operationId kept",
    edits: [{ file: OPS, from: GET_PAL_AT, to: MOVED }],
    bump: 'major',
    kind: 'operation-moved',
    path: 'GET /services/rest/pals/one/{id}',
  },
  {
    name: "an operation's method, its operationId kept",
    edits: [{ file: OPS, from: GET_PAL_AT, to: GET_PAL_AT.replace('get:', 'post:') }],
    bump: 'major',
    kind: 'operation-moved',
    path: 'POST /services/rest/pals/{id}',
  },
);

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

describe('operation changes', () => {
  it.each(CASES)('$name is $bump', (c) => {
    const pair = makePair(c.edits);
    cleanups.push(pair.dispose);
    const report = diffContracts(
      loadContract(pair.before, 'before'),
      loadContract(pair.after, 'after'),
    );
    const match = report.changes.find((x) => x.kind.startsWith(c.kind) && x.path.includes(c.path));
    expect(match, JSON.stringify(report.changes, null, 1)).toBeDefined();
    expect(match!.bump).toBe(c.bump);
    expect(report.bump).toBe(c.bump);
  });

  const diff = (edits: Edit[]) => {
    const pair = makePair(edits);
    cleanups.push(pair.dispose);
    return diffContracts(loadContract(pair.before, 'before'), loadContract(pair.after, 'after'));
  };

  it('reports a moved operation once, as moved, not as one removed and one added', () => {
    expect(diff([{ file: OPS, from: GET_PAL_AT, to: MOVED }])).toEqual({
      bump: 'major',
      changes: [
        {
          bump: 'major',
          kind: 'operation-moved',
          path: 'GET /services/rest/pals/one/{id}',
          reason:
            'operation getPal moved from GET /services/rest/pals/{id} to GET /services/rest/pals/one/{id}: clients built for the old path call a route the server no longer has',
        },
      ],
    });
  });

  it('compares a moved operation as one that stayed: its parameters, body and response', () => {
    const response = {
      file: OPS,
      from: /(operationId: getPal[\s\S]*?)\$ref: '#\/components\/schemas\/PalInfo'/,
      to: "$1$ref: '#/components/schemas/TransactionInfo'",
    } as const;
    const { changes } = diff([
      { file: OPS, from: GET_PAL_AT, to: MOVED },
      {
        file: OPS,
        from: GET_PAL_PARAMS,
        to: GET_PAL_PARAMS.replace(
          '      responses:',
          '        - name: verbose\n          in: query\n          required: false\n          schema:\n            type: boolean\n      responses:',
        ),
      },
      response, // application/xml
      response, // application/json
    ]);
    expect(changes.map((c) => `${c.bump} ${c.kind} ${c.path}`)).toEqual([
      'major operation-moved GET /services/rest/pals/one/{id}',
      'major media-schema-changed GET /services/rest/pals/one/{id} responses 200 application/json',
      'major media-schema-changed GET /services/rest/pals/one/{id} responses 200 application/xml',
      'major response-changed GET /services/rest/pals/one/{id} responses.200',
      'minor openapi-add GET /services/rest/pals/one/{id} parameters[query verbose]',
    ]);
  });

  it('names a removed operation by its id', () => {
    const { changes } = diff([
      {
        file: OPS,
        from: GET_PAL_AT,
        to: '  /services/rest/pals/{id}:\n    x-removed:\n      operationId: getPal\n',
      },
    ]);
    expect(changes.find((c) => c.kind === 'openapi-remove')?.reason).toBe(
      'removed (operation getPal); api-smart-diff: breaking',
    );
  });

  it('finds nothing between a contract and itself', () => {
    const pair = makePair([]);
    cleanups.push(pair.dispose);
    expect(
      diffContracts(loadContract(pair.before, 'before'), loadContract(pair.after, 'after')),
    ).toEqual({ bump: 'none', changes: [] });
  });
});
