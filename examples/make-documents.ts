// Writes the demo pals' documents (committed beside their pal.json) and prints where their fields
// and signatures sit, in the manifest's units: points from the page's top-left corner.
//
//   tools/node/run.sh npx tsx examples/make-documents.ts
//
// examples/pals/expense-approval/documents/claim-form.pdf: an A4 expense claim with its own form
// fields (name, date, cost centre, category, amount, description, receipts attached) and two
// signature boxes (employee, manager). examples/pals/customer-onboarding/documents/terms.pdf: the
// company's details as form fields, the terms of business, and the customer's signature box.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  PDFDocument,
  PDFHexString,
  PDFName,
  StandardFonts,
  rgb,
  type PDFField,
  type PDFFont,
  type PDFForm,
  type PDFPage,
} from 'pdf-lib';

const A4: [number, number] = [595.28, 841.89];
const NAVY = rgb(0.09, 0.2, 0.42);
const GREY = rgb(0.4, 0.43, 0.48);
const LINE = rgb(0.78, 0.8, 0.84);
const FILL = rgb(0.96, 0.97, 0.99);

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
}

/** Top-left box (manifest units) of a rectangle given in PDF space on an A4 page. */
function topLeft(x: number, y: number, width: number, height: number) {
  return {
    x: Math.round(x),
    y: Math.round(A4[1] - y - height),
    width: Math.round(width),
    height: Math.round(height),
  };
}

function header(page: PDFPage, fonts: Fonts, organisation: string, title: string): void {
  page.drawRectangle({ x: 0, y: A4[1] - 90, width: A4[0], height: 90, color: NAVY });
  page.drawText(organisation.toUpperCase(), {
    x: 48,
    y: A4[1] - 38,
    size: 9,
    font: fonts.bold,
    color: rgb(0.75, 0.82, 0.95),
  });
  page.drawText(title, { x: 48, y: A4[1] - 68, size: 24, font: fonts.bold, color: rgb(1, 1, 1) });
}

function section(page: PDFPage, fonts: Fonts, y: number, title: string): void {
  page.drawText(title, { x: 48, y, size: 12, font: fonts.bold, color: NAVY });
  page.drawLine({
    start: { x: 48, y: y - 6 },
    end: { x: A4[0] - 48, y: y - 6 },
    thickness: 0.8,
    color: LINE,
  });
}

/**
 * The field's alternate name (/TU): what the service shows a person beside the field's control,
 * the words printed beside it on the page.
 */
function alternateName(field: PDFField, text: string): void {
  field.acroField.dict.set(PDFName.of('TU'), PDFHexString.fromText(text));
}

function label(page: PDFPage, fonts: Fonts, x: number, y: number, text: string): void {
  page.drawText(text, { x, y, size: 8.5, font: fonts.regular, color: GREY });
}

function signatureBox(
  page: PDFPage,
  fonts: Fonts,
  x: number,
  y: number,
  caption: string,
): ReturnType<typeof topLeft> {
  const [width, height] = [230, 70];
  page.drawRectangle({ x, y, width, height, borderColor: LINE, borderWidth: 0.8, color: FILL });
  page.drawLine({
    start: { x: x + 10, y: y + 14 },
    end: { x: x + width - 10, y: y + 14 },
    thickness: 0.6,
    color: GREY,
  });
  label(page, fonts, x, y - 12, caption);
  return topLeft(x, y, width, height);
}

/**
 * A maker of captioned text fields on `page`, each box recorded in `places` (points from the top-left).
 * `y` is pdf-lib's: from the bottom.
 */
function textFields(
  page: PDFPage,
  fonts: Fonts,
  form: PDFForm,
  places: Record<string, ReturnType<typeof topLeft>>,
) {
  return (id: string, x: number, y: number, width: number, caption: string, height = 22) => {
    label(page, fonts, x, y + height + 5, caption);
    const field = form.createTextField(id);
    alternateName(field, caption);
    field.addToPage(page, {
      x,
      y,
      width,
      height,
      borderColor: LINE,
      borderWidth: 0.8,
      backgroundColor: FILL,
    });
    places[id] = topLeft(x, y, width, height);
    return field;
  };
}

async function claimForm(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle('Expense claim');
  doc.setAuthor('Acme Finance Operations');
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
  const page = doc.addPage(A4);
  const form = doc.getForm();
  header(page, fonts, 'Acme Finance Operations', 'Expense claim');
  page.drawText('Claim a business expense. Attach the receipts; your manager approves the claim.', {
    x: 48,
    y: A4[1] - 118,
    size: 10,
    font: fonts.regular,
    color: GREY,
  });
  const places: Record<string, ReturnType<typeof topLeft>> = {};
  const text = textFields(page, fonts, form, places);

  section(page, fonts, 690, 'Employee');
  text('employeeName', 48, 640, 250, 'Full name');
  text('claimDate', 318, 640, 110, 'Date (YYYY-MM-DD)');
  text('costCentre', 448, 640, 99, 'Cost centre');

  section(page, fonts, 590, 'Expense');
  label(page, fonts, 48, 567, 'Category');
  const category = form.createDropdown('category');
  category.addOptions(['Travel', 'Meals', 'Accommodation', 'Equipment', 'Training', 'Other']);
  alternateName(category, 'Category');
  category.addToPage(page, {
    x: 48,
    y: 540,
    width: 180,
    height: 22,
    borderColor: LINE,
    borderWidth: 0.8,
    backgroundColor: FILL,
  });
  places.category = topLeft(48, 540, 180, 22);
  text('amount', 248, 540, 120, 'Amount (CHF)');
  const description = text('description', 48, 420, 499, 'What was bought, and why', 90);
  description.enableMultiline();
  description.setFontSize(10);
  const receipts = form.createCheckBox('receiptsAttached');
  alternateName(receipts, 'The receipts are attached to this claim.');
  receipts.addToPage(page, {
    x: 48,
    y: 388,
    width: 14,
    height: 14,
    borderColor: GREY,
    borderWidth: 0.8,
  });
  places.receiptsAttached = topLeft(48, 388, 14, 14);
  page.drawText('The receipts are attached to this claim.', {
    x: 70,
    y: 391,
    size: 10,
    font: fonts.regular,
  });

  section(page, fonts, 350, 'Approval');
  label(page, fonts, 48, 327, "Manager's note (filled in by the manager)");
  page.drawRectangle({
    x: 48,
    y: 270,
    width: 499,
    height: 50,
    borderColor: LINE,
    borderWidth: 0.8,
    color: FILL,
  });
  places.managerNote = topLeft(48, 270, 499, 50);

  section(page, fonts, 240, 'Signatures');
  places['employee-signature'] = signatureBox(page, fonts, 48, 140, 'Employee');
  places['manager-signature'] = signatureBox(page, fonts, 317, 140, 'Manager, approving the claim');
  page.drawText(
    'Signed in the browser; the completed claim carries an evidence page of every signature.',
    { x: 48, y: 60, size: 8, font: fonts.regular, color: GREY },
  );
  console.log('claim-form.pdf', JSON.stringify(places, null, 1));
  return doc.save();
}

const TERMS = [
  '1. Scope. These terms govern the business account that Acme opens for the customer named above.',
  '2. Identity. The customer confirms that the company details given are true and complete, and',
  '   provides a valid identity document of the person signing.',
  '3. Orders and invoices. Orders are binding once confirmed in writing. Invoices are payable within',
  '   30 days; late payments bear interest at the statutory rate.',
  '4. Data. Acme keeps the customer’s data to run the account and as the law requires, and never',
  '   sells it. The customer may ask for a copy or a correction at any time.',
  '5. Term. Either party may close the account with 30 days’ notice in writing.',
  '6. Law. These terms are governed by Swiss law; the courts of Zurich have jurisdiction.',
];

async function termsPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setTitle('Business account: company details and terms');
  doc.setAuthor('Acme Customer Operations');
  const fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
  };
  const form = doc.getForm();
  const places: Record<string, ReturnType<typeof topLeft>> = {};
  const page = doc.addPage(A4);
  header(page, fonts, 'Acme Customer Operations', 'Business account');
  const text = textFields(page, fonts, form, places);
  section(page, fonts, 700, 'Company');
  text('company', 48, 650, 300, 'Company name');
  text('vatId', 368, 650, 179, 'VAT number');
  const address = text('address', 48, 560, 300, 'Registered address', 60);
  address.enableMultiline();
  address.setFontSize(10);
  text('email', 368, 598, 179, 'Contact e-mail');

  section(page, fonts, 520, 'Terms of business');
  TERMS.forEach((line, i) =>
    page.drawText(line, { x: 48, y: 495 - i * 15, size: 9.5, font: fonts.regular }),
  );
  const accept = form.createCheckBox('acceptTerms');
  alternateName(accept, 'We accept these terms of business.');
  accept.addToPage(page, {
    x: 48,
    y: 320,
    width: 14,
    height: 14,
    borderColor: GREY,
    borderWidth: 0.8,
  });
  places.acceptTerms = topLeft(48, 320, 14, 14);
  page.drawText('We accept these terms of business.', {
    x: 70,
    y: 323,
    size: 10,
    font: fonts.bold,
  });
  section(page, fonts, 280, 'Signature');
  places['customer-signature'] = signatureBox(page, fonts, 48, 180, 'For the company');
  console.log('terms.pdf', JSON.stringify(places, null, 1));
  return doc.save();
}

const pals = fileURLToPath(new URL('./pals/', import.meta.url));
writeFileSync(`${pals}expense-approval/documents/claim-form.pdf`, await claimForm());
writeFileSync(`${pals}customer-onboarding/documents/terms.pdf`, await termsPdf());
