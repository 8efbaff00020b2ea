// Accounts' email_key as email-key.ts now computes it: one key per mailbox, whatever the address's
// Unicode form, width or IDNA spelling (before: the address in lower case). Keys of ASCII
// addresses come out as before, so only the others are written. Two accounts that the old key kept
// apart for one mailbox (`exämple.com` and `xn--exmple-cua.com`) both stay, with their SSOs: one
// holds the new key (the address looks it up), the other keeps its old one; no third is made.
import type { Kysely, Migration } from 'kysely';
import { emailKey } from '../../email-key.js';

const PAGE = 1000;

export const emailKeysPerMailbox: Migration = {
  async up(db: Kysely<any>) {
    for (let after = ''; ;) {
      const rows: { id: string; email: string; email_key: string }[] = await db
        .selectFrom('accounts')
        .select(['id', 'email', 'email_key'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(PAGE)
        .execute();
      for (const row of rows) {
        const key = emailKey(row.email);
        if (key === row.email_key) continue;
        const taken = await db
          .selectFrom('accounts')
          .select('id')
          .where('email_key', '=', key)
          .executeTakeFirst();
        if (!taken)
          await db
            .updateTable('accounts')
            .set({ email_key: key })
            .where('id', '=', row.id)
            .execute();
      }
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.id;
    }
  },
  // The old keys are the addresses in lower case: the keys written above go back to those.
  async down(db: Kysely<any>) {
    const rows: { id: string; email: string; email_key: string }[] = await db
      .selectFrom('accounts')
      .select(['id', 'email', 'email_key'])
      .execute();
    for (const row of rows)
      if (row.email_key !== row.email.toLowerCase())
        await db
          .updateTable('accounts')
          .set({ email_key: row.email.toLowerCase() })
          .where('id', '=', row.id)
          .execute();
  },
};
