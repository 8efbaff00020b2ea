// The session page's script (docs/web-mode.md). The page works without it as a plain form; this
// adds what a browser with JavaScript can do: each page of a document drawn with pdf.js (an image
// document's page is already an <img>), the fields placed where they sit on the page (on a wide
// screen; a phone keeps them in a list under the page, with markers on the page), and a drawing
// pad for each of the person's signatures. Everything it loads comes from the service's own
// origin, named on <main> by the server.
const main = document.getElementById('session');
const form = document.getElementById('session-form');

if (main && form) {
  document.documentElement.classList.add('js');
  placeBoxes();
  preventEnterSubmit();
  // Before preventSecondSubmit: a form it stops is not on its way.
  checkFileSizes();
  preventSecondSubmit();
  keepAliveWhileActive();
  setUpSignatures().catch((error) => console.error('signature pads', error));
  drawPdfPages().catch((error) => pageFailure(error));
  // What the last action came to is read first: a failure, or a success (on the page the form's
  // 303 led to, a live region already full when it loads is not read out).
  const outcome = document.getElementById('outcome');
  if (outcome && (outcome.classList.contains('failure') || outcome.classList.contains('success')))
    outcome.focus();
  leadMessageLinksToTheirControls();
  awaitCompletedDocuments();
}

/**
 * A completed PDF being written (off the commit, in a few seconds): asked about every 3 s, and
 * the page shown again once it is there, with its link. (The page does not reload itself: it
 * would take a screen reader back to its top each time.)
 */
function awaitCompletedDocuments() {
  const pending = document.querySelector('.completed-pending[data-completed]');
  if (!pending) return;
  // Two minutes after the page came (a function's constant: this runs before the module's own
  // would be set).
  const until = Date.now() + 120_000;
  const ask = async () => {
    try {
      const answer = await fetch(pending.dataset.completed, { method: 'HEAD', cache: 'no-store' });
      if (answer.ok) return window.location.reload();
    } catch {
      // Asked again below: a connection that failed once may not fail twice.
    }
    if (Date.now() < until) setTimeout(ask, 3000);
  };
  setTimeout(ask, 3000);
}

/**
 * A message's link names a field and points at its error's words, or points at the signature or
 * the file the form was stopped for: followed as a plain link it scrolls its target to the
 * window's top edge, the label above out of sight, and leaves the focus where it was. The control
 * takes the focus instead (on a phone a field's keyboard opens), in the middle of the window.
 */
function leadMessageLinksToTheirControls() {
  for (const link of document.querySelectorAll('#outcome a[href^="#"]')) {
    link.addEventListener('click', (event) => {
      const anchor = document.getElementById(decodeURIComponent(link.hash.slice(1)));
      // A field's words lead to the control they describe; a signature or a file, to itself.
      const control =
        anchor && anchor.id.startsWith('error-')
          ? form.querySelector(`[aria-describedby~="${CSS.escape(anchor.id)}"]`)
          : anchor;
      if (!control) return;
      event.preventDefault();
      const target =
        control.tagName === 'FIELDSET'
          ? (control.querySelector('input:not([type="hidden"])') ?? control)
          : control;
      target.focus({ preventScroll: true });
      (control.closest('.field') ?? control).scrollIntoView({ block: 'center' });
    });
  }
}

/** Every box with a position gets it as CSS variables; the stylesheet decides where to use them. */
function placeBoxes() {
  for (const page of document.querySelectorAll('.page')) {
    page.style.setProperty('--aspect', `${page.dataset.width} / ${page.dataset.height}`);
    page.classList.add('placed');
  }
  for (const el of document.querySelectorAll('[data-x]')) {
    el.style.setProperty('--x', `${el.dataset.x}%`);
    el.style.setProperty('--y', `${el.dataset.y}%`);
    el.style.setProperty('--w', `${el.dataset.w}%`);
    el.style.setProperty('--h', `${el.dataset.h}%`);
  }
}

/** Enter in a one-line field would press the first action's button: a person rarely means that. */
function preventEnterSubmit() {
  form.addEventListener('keydown', (event) => {
    const target = event.target;
    if (event.key === 'Enter' && target instanceof HTMLInputElement && target.type !== 'submit')
      event.preventDefault();
  });
}

/**
 * A file over the form's cap (UPLOAD_MAX_MB, for all its files together) is said at once, beside
 * its control, and the form is not sent: on a phone, a photo is often larger, and sending it
 * would take minutes only to be refused. The server refuses it too, for a page without script.
 */
function checkFileSizes() {
  const section = form.querySelector('.uploads[data-max-bytes]');
  if (!section) return;
  const max = Number(section.dataset.maxBytes);
  const inputs = [...section.querySelectorAll('input[type="file"]')];
  const sizeOf = (input) => [...input.files].reduce((sum, file) => sum + file.size, 0);
  // The server's rule, in the form's order: a file over the cap is refused and not counted; a
  // file that takes the files before it past the cap is refused; the others count. (A file the
  // server kept from the last try is counted after these, and said by the server if it no
  // longer fits.)
  const problems = () => {
    let total = 0;
    return inputs.map((input) => {
      const size = sizeOf(input);
      if (size === 0) return '';
      if (size > max)
        return `This file is ${inWords(size, 'up')}: the most is ${inWords(max)}. Choose a smaller one.`;
      if (total + size > max)
        return `With the files chosen above it, this makes ${inWords(total + size, 'up')}: the most for this page is ${inWords(max)}. Choose a smaller file.`;
      total += size;
      return '';
    });
  };
  const show = (input, problem) => {
    const block = input.closest('.upload');
    const id = `${input.id}-problem`;
    let line = document.getElementById(id);
    if (problem && !line) {
      line = document.createElement('p');
      line.id = id;
      line.className = 'field-error';
      line.setAttribute('role', 'alert');
      input.before(line);
    }
    if (line) line.textContent = problem;
    if (!problem) line?.remove();
    block.classList.toggle('invalid', Boolean(problem));
    // What the control is described by without a problem: its hint, and the file kept from the
    // last try while no other is chosen (the chosen one replaces it).
    const kept = document.getElementById(`${input.id}-draft`);
    if (kept) kept.hidden = input.files.length > 0;
    const base = [kept && !kept.hidden ? kept.id : '', `${input.id}-hint`]
      .filter(Boolean)
      .join(' ');
    input.setAttribute('aria-describedby', problem ? `${id} ${base}` : base);
    if (problem) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    return problem;
  };
  // Each choice checks them all: choosing a smaller file may mend another's "together" problem.
  const check = () => problems().map((problem, n) => show(inputs[n], problem));
  for (const input of inputs) input.addEventListener('change', check);
  // A browser may have kept a choice across Back and Forward.
  check();
  form.addEventListener('submit', (event) => {
    const found = check();
    const first = inputs.find((_, n) => found[n]);
    if (!first) return;
    event.preventDefault();
    first.focus();
    first.closest('.upload').scrollIntoView({ block: 'center' });
  });
}

/**
 * As the server writes a size: "120 KB", "1.5 MB", "10 MB". A size over a cap is rounded up, so
 * that a file just over 10 MB never reads "10 MB: the most is 10 MB".
 */
function inWords(size, rounding = 'nearest') {
  const round = rounding === 'up' ? Math.ceil : Math.round;
  const kb = round(size / 1024);
  if (kb < 1024) return `${Math.max(1, kb)} KB`;
  return `${(round((size * 10) / (1024 * 1024)) / 10).toFixed(1).replace(/\.0$/, '')} MB`;
}

/**
 * A second tap while the form is on its way would send it again: the action, done by the first,
 * is then no longer offered, and the browser would show the second's refusal in place of the
 * first's result. Only the first is sent; a page shown again by the Back button may send anew.
 */
function preventSecondSubmit() {
  let sending = false;
  let release;
  const settle = (busy) => {
    sending = busy;
    clearTimeout(release);
    // A person who stopped the page's loading (no event says so) may send it again later.
    if (busy) release = setTimeout(() => settle(false), 20_000);
    form.toggleAttribute('aria-busy', busy);
    form.classList.toggle('sending', busy);
  };
  form.addEventListener('submit', (event) => {
    if (event.defaultPrevented) return;
    if (sending) event.preventDefault();
    else settle(true);
  });
  window.addEventListener('pageshow', () => settle(false));
}

/**
 * The session ends after 30 minutes without a request, and a person filling in a long form, or
 * reading the document, sends none: what they typed would be lost to the "session has ended"
 * page. While they type, tick, choose or draw, the page asks for itself (HEAD), at most once
 * every five minutes, which counts as their request.
 */
function keepAliveWhileActive() {
  const every = 5 * 60 * 1000;
  let last = Date.now();
  const alive = () => {
    if (Date.now() - last < every) return;
    last = Date.now();
    fetch(location.pathname, { method: 'HEAD', cache: 'no-store' }).catch(() => {});
  };
  for (const type of ['input', 'change', 'pointerdown', 'keydown'])
    form.addEventListener(type, alive, { passive: true });
}

async function drawPdfPages() {
  const pages = [...document.querySelectorAll('.page[data-kind="pdf"]')];
  if (pages.length === 0) return;
  const pdfjs = await import(main.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = main.dataset.pdfjsWorker;
  const documents = new Map();
  for (const page of pages) {
    const src = page.dataset.src;
    if (!documents.has(src))
      documents.set(
        src,
        pdfjs.getDocument({
          url: src,
          isEvalSupported: false,
          standardFontDataUrl: main.dataset.standardFonts,
          withCredentials: true,
        }).promise,
      );
  }
  for (const page of pages) {
    const pdf = await documents.get(page.dataset.src);
    const pdfPage = await pdf.getPage(Number(page.dataset.page));
    const sheet = page.querySelector('.sheet');
    const canvas = document.createElement('canvas');
    canvas.className = 'page-canvas';
    // Drawn for the widest the sheet may get on this screen, sharp on a high-density one.
    const base = pdfPage.getViewport({ scale: 1 });
    const cssWidth = Math.max(sheet.clientWidth, 360);
    const scale = Math.min(4, (cssWidth * (window.devicePixelRatio || 1)) / base.width);
    const viewport = pdfPage.getViewport({ scale });
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    sheet.prepend(canvas);
    await pdfPage.render({ canvas, canvasContext: canvas.getContext('2d'), viewport }).promise;
    page.classList.add('drawn');
    main.dataset.firstPageDrawn = 'true';
  }
  main.dataset.pagesDrawn = 'true';
}

function pageFailure(error) {
  console.error('pdf pages', error);
  main.dataset.pagesDrawn = 'failed';
  for (const page of document.querySelectorAll('.page[data-kind="pdf"]'))
    page.classList.remove('placed');
}

async function setUpSignatures() {
  const blocks = [...document.querySelectorAll('.signature.mine')];
  if (blocks.length === 0) return;
  const { default: SignaturePad } = await import(main.dataset.signaturePad);
  const pads = [];
  for (const block of blocks) {
    const padBox = block.querySelector('.pad');
    const canvas = block.querySelector('.pad-canvas');
    const drawn = block.querySelector('.signature-drawn');
    const typed = block.querySelector('.signature-typed');
    const marker = document.querySelector(
      `.marker[data-marker="${CSS.escape(block.dataset.signature)}"]`,
    );
    padBox.hidden = false;
    block.classList.add('has-pad');
    // A known person signs by name with a box to tick; an anonymous one types a name.
    const byName = typed.type === 'checkbox';
    const typedText = () => (byName ? (typed.checked ? typed.value : '') : typed.value.trim());
    if (byName) block.querySelector('.typed-label').prepend('Or, without drawing: ');
    else typed.previousElementSibling.textContent = 'Or type your full name instead';
    const pad = new SignaturePad(canvas, { penColor: '#0b2a6f', minWidth: 0.8, maxWidth: 2.6 });
    const fit = () => {
      // The canvas's drawing size follows its shown size and the screen's density. Changing it
      // clears the canvas, so what was drawn (strokes, and a restored drawing) is put back.
      const ratio = Math.max(window.devicePixelRatio || 1, 1);
      const width = Math.round(canvas.offsetWidth * ratio);
      const height = Math.round(canvas.offsetHeight * ratio);
      if (canvas.width === width && canvas.height === height) return;
      canvas.width = width;
      canvas.height = height;
      canvas.getContext('2d').scale(ratio, ratio);
      pad.redraw();
    };
    const show = () => {
      if (!marker) return;
      marker.replaceChildren();
      if (block.dataset.drawn === 'true') {
        const img = document.createElement('img');
        img.alt = '';
        img.src = pad.toDataURL('image/png');
        marker.append(img);
      } else if (typedText() !== '') {
        const span = document.createElement('span');
        span.className = 'typed-preview';
        span.textContent = typedText();
        marker.append(span);
      } else {
        const span = document.createElement('span');
        span.textContent = 'Sign here';
        marker.append(span);
      }
    };
    fit();
    // The drawing of a form that did not go through, back on its pad (the pad does not count an
    // image it was given as drawn, so the page keeps that state itself: data-drawn).
    if (drawn.value.startsWith('data:image/png;base64,')) {
      await pad.fromDataURL(drawn.value, {
        ratio: 1,
        width: canvas.offsetWidth,
        height: canvas.offsetHeight,
      });
      block.dataset.drawn = 'true';
    }
    pad.addEventListener('endStroke', () => {
      if (byName) typed.checked = false;
      else typed.value = '';
      block.dataset.drawn = 'true';
      show();
    });
    typed.addEventListener(byName ? 'change' : 'input', () => {
      if (typedText() !== '') {
        pad.clear();
        delete block.dataset.drawn;
      }
      show();
    });
    block.querySelector('.pad-clear').addEventListener('click', () => {
      pad.clear();
      delete block.dataset.drawn;
      show();
    });
    window.addEventListener('resize', fit);
    // The box on the page leads to its pad (the pad itself is under the page).
    marker?.addEventListener('click', () =>
      block.scrollIntoView({ block: 'center', behavior: 'smooth' }),
    );
    marker?.classList.add('to-pad');
    pads.push({ block, pad, drawn, typed });
    show();
  }
  // Only one of a signature's two controls posts: the drawing when there is one, else the name.
  form.addEventListener('submit', (event) => {
    // A form stopped before it goes (a file over the cap) keeps both controls as they were.
    if (event.defaultPrevented) return;
    for (const { block, pad, drawn, typed } of pads) {
      const hasDrawing = block.dataset.drawn === 'true';
      drawn.disabled = !hasDrawing;
      drawn.value = hasDrawing ? pad.toDataURL('image/png') : '';
      typed.disabled = hasDrawing;
    }
  });
  main.dataset.padsReady = 'true';
}
