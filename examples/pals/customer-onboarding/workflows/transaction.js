// Customer onboarding: company details, identity documents, then the signed terms. T6 takes the
// step from postData "step"; the transaction completes when all three are in.
//
// In a browser (pal.json's `actions`), `submit` takes the terms PDF's fields (company, vatId,
// address, email, acceptTerms), the uploaded identity document (pal.json's `uploads`) and the
// customer's signature at once.
import { company, vatNumber } from './checks.js';

const STEPS = ['company', 'documents', 'terms'];
/** What each step asks for, as the customer reads it. */
const STEP_WORDS = {
  company: 'the company details',
  documents: 'an identity document',
  terms: 'the signed terms',
};

export function runWorkflow(input, pal) {
  const step = input.values.step ?? 'show';
  if (step === 'company') {
    const problems = company(input.values);
    if (problems.length > 0) return refused(problems);
    keepCompany(input.values, pal);
  } else if (step === 'documents') {
    const documents = input.documents ?? [];
    if (documents.length === 0)
      return refused(['documents: attach at least one identity document']);
    pal.vars.set('documents', documents.map((d) => d.filename ?? 'unnamed').join(', '));
    pal.vars.set('done.documents', 'yes');
  } else if (step === 'terms') {
    if (input.values.accept !== 'yes')
      return refused(['accept: the terms must be accepted ("yes")']);
    pal.vars.set('done.terms', 'yes');
  } else if (step !== 'show') {
    throw new Error(`unknown step "${step}": expected one of ${STEPS.join(', ')}`);
  }
  return progress(pal);
}

/** The browser's one action: the details and the signed terms together. */
export function submit(input, pal) {
  const problems = company(input.values);
  if (input.values.acceptTerms !== 'true')
    problems.push('acceptTerms: tick the box to accept the terms');
  if (problems.length > 0) return refused(problems);
  keepCompany(input.values, pal);
  pal.vars.set('done.terms', 'yes');
  // The upload is required in pal.json, so the service stops a form without it; kept from an
  // earlier form, it is listed by pal.documents.uploads().
  const identity = (input.uploads ?? [])
    .concat(pal.documents.uploads())
    .find((u) => u.name === 'identity');
  if (identity) {
    pal.vars.set('documents', identity.filename);
    pal.vars.set('done.documents', 'yes');
  }
  return progress(pal);
}

export function enter(input, pal) {
  return progress(pal);
}

/** A step's answer when its input does not do: nothing is kept. */
function refused(problems) {
  return {
    success: false,
    messages: problems.map((message) => ({ message, type: 'INVALID_ARGUMENT' })),
  };
}

function keepCompany(values, pal) {
  pal.vars.set('company', values.company);
  pal.vars.set('vatId', vatNumber(values.vatId));
  pal.vars.set('email', values.email);
  pal.vars.set('done.company', 'yes');
}

function progress(pal) {
  const missing = STEPS.filter((step) => pal.vars.get(`done.${step}`) !== 'yes');
  if (missing.length === 0 && pal.transaction.systemStatus === 'OPEN') {
    pal.transaction.setStatus('READY');
    pal.transaction.complete();
  } else if (missing.length < STEPS.length && pal.transaction.systemStatus === 'OPEN') {
    pal.transaction.setStatus('IN_PROGRESS');
  }
  return {
    messages: [
      {
        message:
          missing.length === 0
            ? `${pal.vars.get('company')} is onboarded`
            : `Still missing: ${inWords(missing.map((step) => STEP_WORDS[step]))}`,
        type: 'INFO',
      },
    ],
    recordsProcessed: STEPS.length - missing.length,
  };
}

/** "a", "a and b", "a, b and c". */
function inWords(items) {
  return items.length < 2
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
