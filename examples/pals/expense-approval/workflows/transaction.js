// Expense approval: an employee submits a claim, the approver approves it or returns it.
//
// In a browser (pal.json's `actions`): the employee fills in the claim form and signs it, then
// "Submit the claim" runs `submit`, which gives the manager the role `manager` and mails them a
// link; the link runs `review`, and the manager's page offers "Approve and sign" (`approve`: the
// manager's signature is needed, pal.json's `signatures`) and "Return to the employee" (`returnClaim`: the manager note
// says why, and the employee is mailed a link back to the claim, `reopen`, to change it, sign it
// anew and submit it again). Approval completes the transaction, and the service writes the completed claim with
// both signatures.
//
// Through the API: T6 (runWorkflow) takes the step from postData "step": submit, approve or
// return (its "reason" required), with the approver's SSO in "approver". T9 (run) lists the claim.

// The manager `npm start` creates in the demo enterprise (apps/server/src/domain/demo.ts): the
// approver of a claim submitted from the browser, where nobody names one. A real deployment
// would name the approver in the claim (T6's "approver") or look it up in its own directory.
const DEMO_MANAGER = 'demo-manager-morgan-sso';
const CLAIM = 'documents/claim-form.pdf';

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
  // A decimal comma is what many people type: "42,50" is 42.50.
  // Leading zeros say nothing: "0042.50" is 42.50.
  const amount = (input.values.amount ?? '')
    .trim()
    .replace(/^(\d+),(\d{1,2})$/, '$1.$2')
    .replace(/^0+(?=\d)/, '');
  const description = (input.values.description ?? '').trim();
  // The browser's form has no approver: the demo's manager approves it.
  const approver = input.values.approver ?? (fromBrowser(input) ? DEMO_MANAGER : undefined);
  // Every problem at once, each naming its field ("field: why"): the page shows each under its
  // field and links to it.
  const problems = [];
  if (!money.test(amount))
    problems.push(
      /^\d{8,}([.,]\d*)?$/.test(amount)
        ? 'amount: a claim is at most CHF 9999999.99'
        : 'amount: write the sum in CHF, such as 120.50',
    );
  // In a browser the date comes from its date picker; one without a picker sends what was typed.
  if (fromBrowser(input)) {
    const date = (input.values.claimDate ?? '').trim();
    if (!date) problems.push('claimDate: give the date of the claim');
    else if (!isDate(date))
      problems.push(
        `claimDate: write the date as year-month-day, such as ${new Date().toISOString().slice(0, 10)}`,
      );
  }
  if (!description) problems.push('description: say what was bought, and why');
  // The box says the receipts are attached: then a file of them is (this form's, or one kept
  // from an earlier submission of a returned claim).
  if (
    fromBrowser(input) &&
    input.values.receiptsAttached === 'true' &&
    !pal.documents.uploads().some((u) => u.name === 'receipts')
  )
    problems.push('receiptsAttached: upload the receipts below, or untick this box');
  if (problems.length > 0) {
    return {
      success: false,
      messages: problems.map((message) => ({ message, type: 'INVALID_ARGUMENT' })),
    };
  }
  if (fromBrowser(input)) {
    pal.documents.setField(CLAIM, 'amount', amount);
    // The entry filled in the name of a person it knows; one who cleared it gets it back. A name
    // they typed over it is kept: the evidence page says who signed, whatever the claim says.
    if (input.person && (input.values.employeeName ?? '').trim() === '')
      pal.documents.setField(
        CLAIM,
        'employeeName',
        `${input.person.firstName} ${input.person.lastName}`,
      );
  }
  const employeeName = fromBrowser(input) ? fieldValue(pal, 'employeeName') : '';
  pal.vars.set('amount', amount);
  pal.vars.set('description', description);
  // Who submitted (a person on the claim's page): a returned claim goes back to them.
  if (input.sso) pal.vars.set('employee', input.sso);
  // A note from an earlier return is answered by this submission: the manager writes afresh.
  if (fromBrowser(input)) pal.documents.setField(CLAIM, 'managerNote', '');
  pal.vars.set('submissions', Number(pal.vars.get('submissions') ?? '0') + 1);
  pal.transaction.setStatus('SUBMITTED');
  if (approver) {
    pal.vars.set('approver', approver);
    // From the browser the manager approves on the claim's page (the role `manager` offers the
    // buttons); through the API the mailed link approves at once.
    const role = fromBrowser(input) ? 'manager' : 'approver';
    pal.roles.assign(approver, role);
    pal.mail.send({
      to: approver,
      subject: `Expense claim of CHF ${amount} to approve`,
      text: `A claim of CHF ${amount}${employeeName ? ` by ${employeeName}` : ''} waits for your approval: ${excerpt(description)}`,
      action: role === 'manager' ? 'review' : 'approve',
    });
  }
  pal.log('claim submitted', { amount, approver: approver ?? null });
  return {
    messages: [{ message: `Submitted CHF ${amount} for approval`, type: 'INFO' }],
    recordsProcessed: 1,
  };
}

export function approve(input, pal) {
  requireStatus(pal, 'SUBMITTED');
  // From the browser the manager's signature is given: pal.json's "approve" needs it, and the
  // service stops the form without it before this runs.
  pal.transaction.setStatus('APPROVED');
  pal.transaction.complete();
  return { messages: [{ message: `Approved CHF ${pal.vars.get('amount')}`, type: 'INFO' }] };
}

export function returnClaim(input, pal) {
  requireStatus(pal, 'SUBMITTED');
  // On the claim's page the manager writes why in "Manager note"; through the API, "reason".
  const reason = (input.values.managerNote ?? input.values.reason ?? '').trim();
  if (!reason) {
    return {
      success: false,
      messages: [
        // Tied to the note's field on the page ("field: why").
        { message: 'managerNote: say what the employee should change', type: 'INVALID_ARGUMENT' },
      ],
    };
  }
  pal.vars.set('returnReason', reason);
  pal.transaction.setStatus('RETURNED');
  // The employee will change the claim: their signature must cover what they submit next, and
  // the manager's (if given with the return) what they approve then.
  pal.documents.clearSignature(CLAIM, 'employee-signature');
  pal.documents.clearSignature(CLAIM, 'manager-signature');
  const employee = pal.vars.get('employee');
  if (employee) {
    pal.mail.send({
      to: employee,
      subject: `Your expense claim of CHF ${pal.vars.get('amount')} was returned`,
      text: `Your manager returned your claim: ${excerpt(reason)}\nOpen it, change what is asked, and submit it again.`,
      action: 'reopen',
    });
  }
  return {
    messages: [
      {
        message: employee
          ? `Returned to the employee, who is mailed a link to it: ${reason}`
          : `Returned: ${reason}`,
        type: 'INFO',
      },
    ],
  };
}
export { returnClaim as return };

/**
 * The mailed link's action: the manager lands on the claim. The link stays in the mail after the
 * claim moved on, so what it says follows the claim's status.
 */
export function review(input, pal) {
  const status = pal.transaction.status;
  const next =
    status === 'SUBMITTED'
      ? 'Check it, then approve and sign, or return it.'
      : status === 'RETURNED'
        ? 'It is back with the employee: you are mailed again when they submit it.'
        : 'There is nothing more for you to do.';
  return { messages: [{ message: `${describe(pal, 'manager')}. ${next}`, type: 'INFO' }] };
}

/**
 * The returned claim's mailed link: the employee lands on the claim, with its button. The link
 * stays in the mail after the claim moved on, so what it says follows the claim's status.
 */
export function reopen(input, pal) {
  const status = pal.transaction.status;
  const message =
    status === 'RETURNED'
      ? `Returned by your manager: ${(pal.vars.get('returnReason') ?? '').replace(/[.!\s]+$/, '')}. Change what is asked, then submit the claim again.`
      : status === 'SUBMITTED'
        ? `${describe(pal)}. You are mailed when your manager has decided.`
        : `${describe(pal)}. There is nothing more for you to do.`;
  return { messages: [{ message, type: 'INFO' }] };
}

/** Runs when a person enters the transaction (T5, P3 tokens). */
export function enter(input, pal) {
  // The employee who opened the claim is known by the entry: their name is filled in, not typed,
  // while the claim is theirs to change (not once submitted).
  const owner = pal.roles.list().some((r) => r.sso === input.sso && r.role === 'owner');
  const editable =
    pal.transaction.systemStatus === 'OPEN' &&
    !['SUBMITTED', 'APPROVED'].includes(pal.transaction.status);
  if (input.person && owner && editable && fieldValue(pal, 'employeeName') === '') {
    pal.documents.setField(
      CLAIM,
      'employeeName',
      `${input.person.firstName} ${input.person.lastName}`,
    );
  }
  // A new claim is dated today (its form asks for YYYY-MM-DD); the employee may change it.
  if (owner && editable && fieldValue(pal, 'claimDate') === '')
    pal.documents.setField(CLAIM, 'claimDate', new Date().toISOString().slice(0, 10));
  const manager = pal.roles.list().some((r) => r.sso === input.sso && r.role === 'manager');
  return { messages: [{ message: describe(pal, manager ? 'manager' : 'employee'), type: 'INFO' }] };
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

/** A session's form posts the claim's fields and signatures; T6 posts a "step". */
function fromBrowser(input) {
  return Array.isArray(input.signatures) && input.values.step === undefined;
}

/** A real day written YYYY-MM-DD (not 2026-02-31). */
function isDate(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  const day = new Date(0);
  day.setUTCFullYear(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return day.toISOString().slice(0, 10) === text;
}

/** A field of the claim as it stands ('' when empty). */
function fieldValue(pal, id) {
  const claim = pal.documents.list().find((d) => d.filename === CLAIM);
  return claim?.fields?.find((f) => f.id === id)?.value ?? '';
}

function requireStatus(pal, status) {
  if (pal.transaction.status !== status) {
    throw new Error(`the claim is ${pal.transaction.status}, not ${status}`);
  }
}

/** A status as the people of the claim read it; the manager is told of their own part. */
const STATUS_WORDS = {
  SUBMITTED: 'waiting for the manager’s approval',
  RETURNED: 'returned to the employee',
  APPROVED: 'approved',
};
const STATUS_WORDS_TO_THE_MANAGER = { ...STATUS_WORDS, SUBMITTED: 'waiting for your approval' };

function describe(pal, reader = 'employee') {
  const amount = pal.vars.get('amount');
  const status = pal.transaction.status;
  const words = reader === 'manager' ? STATUS_WORDS_TO_THE_MANAGER : STATUS_WORDS;
  return amount === undefined
    ? 'No claim submitted yet'
    : `Claim of CHF ${amount} (${pal.vars.get('description')}): ${words[status] ?? status}`;
}

/**
 * What a mail quotes of a person's text: the claim itself holds it whole, and a mail's text has
 * a limit (65,536 characters) that a pasted description may pass. Cut at a character, not inside
 * one written with two code units.
 */
function excerpt(text, max = 2000) {
  const characters = Array.from(text);
  return characters.length <= max
    ? text
    : `${characters.slice(0, max).join('')}… (the claim has the rest)`;
}
