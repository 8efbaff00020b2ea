/** The emitted types match the XSDs: exported enums with the schema's values, plain interfaces, extension. */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  BookmarkType,
  FieldType,
  type ConsoleResult,
  type DataList,
  type Message,
  type PalInfo,
  type PalInfoList,
  type Result,
  type ServicePayload,
  type TransactionResult,
} from '../src/index.js';

const palXsd = readFileSync(new URL('../../../schemas/xsd/pal.xsd', import.meta.url), 'utf8');

function enumeration(simpleType: string): string[] {
  const body =
    new RegExp(`<xs:simpleType name="${simpleType}">([\\s\\S]*?)</xs:simpleType>`).exec(
      palXsd,
    )?.[1] ?? '';
  return [...body.matchAll(/<xs:enumeration value="([^"]+)"\/>/g)].map((m) => m[1]!);
}

describe('@pal-workflow/types', () => {
  it('exports the XSD enumerations as enums with the same values, in order', () => {
    expect(Object.values(FieldType)).toEqual(enumeration('fieldType'));
    expect(Object.values(BookmarkType)).toEqual(enumeration('bookmarkType'));
    expect(FieldType.CHECKBOXCHECKED).toBe('CHECKBOXCHECKED');
  });

  it('types members as the XSD says: optional, lists, nillable, maps, arrays of arrays, extensions', () => {
    expectTypeOf<PalInfo['deployed']>().toEqualTypeOf<boolean>();
    expectTypeOf<PalInfo['id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Message['type']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<Result['messages']>().toEqualTypeOf<Message[] | undefined>();
    expectTypeOf<ServicePayload['data']>().toEqualTypeOf<Record<string, string>>();
    expectTypeOf<DataList['rows']>().toEqualTypeOf<string[][] | undefined>();
    expectTypeOf<PalInfoList>().toEqualTypeOf<PalInfo[]>();
    expectTypeOf<ConsoleResult>().toMatchTypeOf<Result>();
    expectTypeOf<TransactionResult['recordsProcessed']>().toEqualTypeOf<number>();
    expectTypeOf<PalInfo>().not.toHaveProperty('@class');
  });
});
