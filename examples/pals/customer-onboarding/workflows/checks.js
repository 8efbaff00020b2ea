// Checks of customer onboarding, kept apart so they can be run on their own with `pal run`.
const VAT = /^[A-Z]{2}[A-Z0-9]{8,12}$/;

export function company(values) {
  const problems = [];
  if (!values.company) problems.push('company: the registered name');
  if (!VAT.test(values.vatId ?? '')) problems.push('vatId: a VAT number such as DE123456789');
  if (!/^[^@\s]+@[^@\s]+$/.test(values.email ?? '')) problems.push('email: the contact address');
  return problems;
}
