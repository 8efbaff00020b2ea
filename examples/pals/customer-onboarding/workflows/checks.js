// Checks of customer onboarding, kept apart so they can be run on their own with `pal run`.
const VAT = /^[A-Z]{2}[A-Z0-9]{8,12}$/;

/** A VAT number as people write it ("CHE-123.456.789", "de 123456789"), without its marks. */
export function vatNumber(value) {
  return (value ?? '').toUpperCase().replace(/[\s.\-]/g, '');
}

export function company(values) {
  const problems = [];
  if (!(values.company ?? '').trim()) problems.push('company: give the registered name');
  if (!VAT.test(vatNumber(values.vatId)))
    problems.push('vatId: give a VAT number such as DE123456789 or CHE-123.456.789');
  // A domain with a dot in it: "ops@acme" is a typing slip more often than an address.
  if (!/^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$/.test((values.email ?? '').trim()))
    problems.push('email: give an address such as name@example.com');
  return problems;
}
