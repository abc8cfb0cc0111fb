// End-to-end test of the Harmonium kernel in the classic Jupyter Notebook, driven
// in the system's headless Chromium through playwright-core (which never
// downloads a browser). Started by tests/e2e_notebook_test.py, which runs the
// notebook server on 127.0.0.1 and passes its address in the environment:
//
//   E2E_URL     http://127.0.0.1:PORT (no trailing slash)
//   E2E_TOKEN   the server's token
//   E2E_KERNEL  the kernelspec name of the Harmonium kernel under test
//   E2E_CHROMIUM  the browser (default /usr/bin/chromium)
//
// It opens a new Go notebook from the tree page's New menu, then: a cell with a
// plot (an image appears), an interrupt of a long rbmcore call from the
// toolbar (the cell ends quickly and the next cell works), an input box
// (fmt.Scanln: the prompt beside the box, the typed text echoed), a progress
// bar updated in place to 100 %, and a restart from the Kernel menu (earlier
// variables gone, new cells run). It prints one line per step with its timing
// and exits non-zero at the first failure.

import { chromium } from 'playwright-core';

const url = process.env.E2E_URL;
const token = process.env.E2E_TOKEN;
const kernel = process.env.E2E_KERNEL;
const browserPath = process.env.E2E_CHROMIUM || '/usr/bin/chromium';
const stepTimeout = 90_000; // the machine may be loaded; bounds that matter are checked explicitly

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const t0 = Date.now();
function log(msg) {
  console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}`);
}

// runCell appends a code cell with the given source, executes it and returns
// its locator; with wait it also waits until the cell has finished.
async function runCell(page, code, { wait = true } = {}) {
  const index = await page.evaluate((code) => {
    const nb = window.Jupyter.notebook;
    const cell = nb.insert_cell_at_bottom('code');
    cell.set_text(code);
    const i = nb.find_cell_index(cell);
    nb.select(i);
    cell.execute();
    return i;
  }, code);
  const cell = page.locator('.cell').nth(index);
  if (wait) await finished(page, index);
  return { cell, index };
}

// finished waits until cell index shows an execution count (In [n]:) and
// the kernel indicator is idle. The execute_reply comes on the shell
// channel, the outputs and the status on iopub, and the indicator may still
// show the idle of the previous cell; a check of a cell's output therefore
// waits for it with settled.
async function finished(page, index, timeout = stepTimeout) {
  await page.waitForFunction(
    (i) => {
      const c = window.Jupyter.notebook.get_cell(i);
      return c && c.input_prompt_number !== '*' && c.input_prompt_number !== undefined && c.input_prompt_number !== null &&
        document.querySelector('#kernel_indicator_icon.kernel_idle_icon');
    },
    index,
    { timeout },
  );
}

// settled waits (up to 10 s, without failing) until the cell shows what
// locate finds: the execute_reply and a stale idle icon can both arrive
// before the cell's iopub outputs, which travel on another channel.
async function settled(locate) {
  await locate.first().waitFor({ timeout: 10_000 }).catch(() => {});
}

async function outputText(cell) {
  return (await cell.locator('.output_area').allInnerTexts()).join('\n');
}

async function kernelIdle(page, timeout = stepTimeout) {
  await page.waitForFunction(
    () => {
      const k = window.Jupyter.notebook && window.Jupyter.notebook.kernel;
      return k && k.is_connected() && document.querySelector('#kernel_indicator_icon.kernel_idle_icon');
    },
    null,
    { timeout },
  );
}

const browser = await chromium.launch({ executablePath: browserPath, headless: true, args: ['--no-sandbox'] });
let failed = false;
try {
  const context = await browser.newContext();
  context.setDefaultTimeout(stepTimeout);
  const tree = await context.newPage();
  await tree.goto(`${url}/tree?token=${token}`);

  // A new Go notebook from the New menu (it opens in a new tab).
  await tree.click('#new-dropdown-button');
  const [page] = await Promise.all([context.waitForEvent('page'), tree.click(`#kernel-${kernel} a`)]);
  await page.waitForLoadState();
  await page.waitForFunction(() => window.Jupyter && window.Jupyter.notebook && window.Jupyter.notebook._fully_loaded);
  await kernelIdle(page);
  const kernelName = await page.locator('.kernel_indicator_name').innerText();
  check(kernelName.includes('Go'), `kernel indicator says ${JSON.stringify(kernelName)}`);
  log(`new notebook with kernel "${kernelName}"`);

  // A plot: an image appears.
  let t = Date.now();
  let { cell } = await runCell(
    page,
    'import (\n\t"gonum.org/v1/plot"\n\t"gonum.org/v1/plot/plotter"\n)\n' +
      'p := plot.New()\np.Title.Text = "squares"\n' +
      'pts := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}, {X: 2, Y: 4}, {X: 3, Y: 9}}\n' +
      'line, err := plotter.NewLine(pts)\nif err != nil {\n\tpanic(err)\n}\np.Add(line)\np',
  );
  await cell.locator('.output_area img, .output_area svg').first().waitFor();
  check((await cell.locator('.output_error').count()) === 0, `plot cell failed: ${await outputText(cell)}`);
  log(`plot shown in ${Date.now() - t} ms`);

  // An interrupt of a long rbmcore call, from the toolbar.
  await runCell(page, 'import "fmt"\nx := 41\nm := rbm.New(rbm.Binary(500), rbm.Binary(500), rbm.Seed(1))\nch, _ := rbm.NewChains(m, 512, 1)');
  const long = await runCell(page, 'err := ch.Run(ctx, 100000000, nil)\nfmt.Println("AFTER the long call", err)', { wait: false });
  await page.waitForFunction((i) => window.Jupyter.notebook.get_cell(i).input_prompt_number === '*', long.index);
  await page.waitForTimeout(2000); // let it run
  t = Date.now();
  await page.click('button[data-jupyter-action="jupyter-notebook:interrupt-kernel"]');
  await finished(page, long.index);
  const interruptMs = Date.now() - t;
  check(interruptMs < 3000, `the interrupted cell ended ${interruptMs} ms after the click`);
  const next = await runCell(page, 'fmt.Println("next cell", x+1)');
  await settled(next.cell.locator('.output_area', { hasText: 'next cell' }));
  const nextOut = await outputText(next.cell);
  check(nextOut.includes('next cell 42') && !nextOut.includes('AFTER'), `next cell output ${JSON.stringify(nextOut)}`);
  log(`interrupt: the cell ended ${interruptMs} ms after the click; the next cell works`);

  // An input box: the prompt beside it, the answer echoed.
  const ask = await runCell(
    page,
    'fmt.Println("before the prompt")\nfmt.Print("Your name: ")\nvar name string\nfmt.Scanln(&name)\nfmt.Println("hello", name)',
    { wait: false },
  );
  const box = ask.cell.locator('input.raw_input');
  await box.waitFor();
  const prompt = await ask.cell.locator('.raw_input_prompt').innerText();
  check(prompt.trim() === 'Your name:', `input prompt ${JSON.stringify(prompt)}`);
  // The box comes after the line printed before it (which may come late, and
  // then below the box: the failure this checks).
  await ask.cell.locator('.output_area .output_text', { hasText: 'before the prompt' }).waitFor({ timeout: 10_000 });
  const order = await ask.cell.evaluate((el) => {
    const text = el.querySelector('.output_area .output_text');
    const input = el.querySelector('.raw_input_container');
    return text && input ? text.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_FOLLOWING : -1;
  });
  check(order > 0, 'the input box is not below the text printed before it');
  await box.fill('Ada');
  await box.press('Enter');
  await finished(page, ask.index);
  await settled(ask.cell.locator('.output_area', { hasText: 'hello' }));
  const askOut = await outputText(ask.cell);
  check(askOut.includes('Your name: Ada') && askOut.includes('hello Ada'), `input cell output ${JSON.stringify(askOut)}`);
  log('input box: prompt beside the box, answer echoed');

  // A progress bar, updated in place.
  t = Date.now();
  const bar = await runCell(
    page,
    'import "time"\nbar := display.NewProgress("e2e steps", 40)\nfor i := 1; i <= 40; i++ {\n\ttime.Sleep(25 * time.Millisecond)\n\tbar.Set(i)\n}',
  );
  await bar.cell.locator('.hm-progress').first().waitFor();
  check((await bar.cell.locator('.hm-progress').count()) === 1, 'the progress bar was drawn more than once');
  const barText = await bar.cell.locator('.hm-progress').innerText();
  check(/100%/.test(barText) && /40\/40/.test(barText) && /it\/s/.test(barText), `progress bar reads ${JSON.stringify(barText)}`);
  log(`progress bar: ${JSON.stringify(barText.replace(/\s+/g, ' '))} (${Date.now() - t} ms)`);

  // A restart from the Kernel menu.
  t = Date.now();
  await page.click('#kernellink');
  await page.click('#restart_kernel');
  await page.click('.modal-footer button.btn-danger');
  await page.waitForFunction(() => !document.querySelector('.modal.in'));
  await kernelIdle(page);
  const after = await runCell(page, 'x');
  await settled(after.cell.locator('.output_error'));
  check((await after.cell.locator('.output_error').count()) === 1, `x survived the restart: ${await outputText(after.cell)}`);
  const fresh = await runCell(page, '6 * 7');
  await settled(fresh.cell.locator('.output_area', { hasText: '42' }));
  const freshOut = await outputText(fresh.cell);
  check(freshOut.includes('42'), `after the restart 6 * 7 gave ${JSON.stringify(freshOut)}`);
  log(`restart: ${Date.now() - t} ms until the next cell ran; earlier variables are gone`);
} catch (e) {
  failed = true;
  console.error(`FAIL: ${e.stack || e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
