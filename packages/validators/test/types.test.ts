/** The zod schemas infer exactly the types of @pal-workflow/types (checked by tsc and vitest). */
import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as T from '@pal-workflow/types';
import type * as V from '../src/index.js';

describe('zod schemas and types agree', () => {
  it('for objects, extensions, enums, maps and arrays', () => {
    expectTypeOf<z.infer<typeof V.zPalInfo>>().toEqualTypeOf<T.PalInfo>();
    expectTypeOf<z.infer<typeof V.zConsoleResult>>().toEqualTypeOf<T.ConsoleResult>();
    expectTypeOf<z.infer<typeof V.zTransactionResult>>().toEqualTypeOf<T.TransactionResult>();
    expectTypeOf<z.infer<typeof V.zMessage>>().toEqualTypeOf<T.Message>();
    expectTypeOf<z.infer<typeof V.zDocument>>().toEqualTypeOf<T.Document>();
    expectTypeOf<z.infer<typeof V.zField>>().toEqualTypeOf<T.Field>();
    expectTypeOf<z.infer<typeof V.zFieldType>>().toEqualTypeOf<T.FieldType>();
    expectTypeOf<z.infer<typeof V.zServiceRequest>>().toEqualTypeOf<T.ServiceRequest>();
    expectTypeOf<z.infer<typeof V.zServiceResponse>>().toEqualTypeOf<T.ServiceResponse>();
    expectTypeOf<z.infer<typeof V.zDataList>>().toEqualTypeOf<T.DataList>();
    expectTypeOf<z.infer<typeof V.zStringMap>>().toEqualTypeOf<T.StringMap>();
    expectTypeOf<z.infer<typeof V.zPalInfoList>>().toEqualTypeOf<T.PalInfoList>();
  });
});
