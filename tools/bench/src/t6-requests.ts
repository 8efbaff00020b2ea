// The T6 load of the bench sections: a trivial workflow run on the bench server's transactions in
// turn, each with a value of its own.
import type autocannon from 'autocannon';

/** autocannon requests that POST T6 to each of `transactions` in turn. */
export function t6Requests(transactions: readonly string[]): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'POST',
      setupRequest: (request) => {
        const id = transactions[next++ % transactions.length];
        return {
          ...request,
          path: `/services/rest/transactions/${id}/runWorkflow`,
          body: `{"postData":[{"name":"n","value":"${next}"}]}`,
        };
      },
    },
  ];
}
