// Expense approval: an employee submits a claim, the approver approves it or returns it.
//
// T6 (runWorkflow) takes the step from postData "step": submit, approve or return. A mail link
// or an entry runs the exports approve and return directly. T9 (run) lists the claim.

const money = /^\d{1,7}(\.\d{1,2})?$/;

export function runWorkflow(input, pal) {
  switch (input.values.step ?? 'show') {
    case 'submit':
      return submit(input, pal);
    case 'approve':
      return approve(input, pal);
    case 'return':
      return returnClaim(input, pal);
    default:
      return { messages: [{ message: describe(pal), type: 'INFO' }] };
  }
}

export function submit(input, pal) {
  const { amount, description, approver } = input.values;
  if (!money.test(amount ?? '')) {
    return {
      success: false,
      messages: [{ message: 'amount: a sum such as 120.50', type: 'INVALID_ARGUMENT' }],
    };
  }
  if (!description) {
    return {
      success: false,
      messages: [{ message: 'description: what was bought, and why', type: 'INVALID_ARGUMENT' }],
    };
  }
  pal.vars.set('amount', amount);
  pal.vars.set('description', description);
  pal.vars.set('submissions', Number(pal.vars.get('submissions') ?? '0') + 1);
  pal.transaction.setStatus('SUBMITTED');
  if (approver) {
    pal.vars.set('approver', approver);
    pal.roles.assign(approver, 'approver');
    pal.mail.send({
      to: approver,
      subject: `Expense claim of ${amount} to approve`,
      text: `A claim waits for your approval: ${description} (${amount}).`,
      action: 'approve',
    });
  }
  pal.log('claim submitted', { amount, approver: approver ?? null });
  return {
    messages: [{ message: `Submitted ${amount} for approval`, type: 'INFO' }],
    recordsProcessed: 1,
  };
}

export function approve(input, pal) {
  requireStatus(pal, 'SUBMITTED');
  pal.transaction.setStatus('APPROVED');
  pal.transaction.complete();
  return { messages: [{ message: `Approved ${pal.vars.get('amount')}`, type: 'INFO' }] };
}

export function returnClaim(input, pal) {
  requireStatus(pal, 'SUBMITTED');
  pal.vars.set('returnReason', input.values.reason ?? 'no reason given');
  pal.transaction.setStatus('RETURNED');
  return { messages: [{ message: `Returned: ${pal.vars.get('returnReason')}`, type: 'INFO' }] };
}
export { returnClaim as return };

/** Runs when a person enters the transaction (T5, P3 tokens). */
export function enter(input, pal) {
  return { messages: [{ message: describe(pal), type: 'INFO' }] };
}

export function run(input, pal) {
  const vars = pal.vars.all();
  return {
    status: pal.transaction.status,
    amount: vars.amount ?? '',
    description: vars.description ?? '',
    submissions: vars.submissions ?? '0',
  };
}

function requireStatus(pal, status) {
  if (pal.transaction.status !== status) {
    throw new Error(`the claim is ${pal.transaction.status}, not ${status}`);
  }
}

function describe(pal) {
  const amount = pal.vars.get('amount');
  return amount === undefined
    ? 'No claim submitted yet'
    : `Claim of ${amount} (${pal.vars.get('description')}): ${pal.transaction.status}`;
}
