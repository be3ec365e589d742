// The dashboard in a real browser: Debian's chromium driven by
// playwright-core against a running perfd serve. Opens every page, checks
// what it shows against the API's own answers, follows table cells to
// receipts, tampers with a stored gain and sees the recompute button say
// so, and keeps a screenshot of each page.
//
// Environment: BASE (http://127.0.0.1:PORT), DB (the database the server
// reads, for sqlite3), SHOTS (a directory for screenshots), CHROMIUM (the
// browser, default /usr/bin/chromium), PROFILE (a fresh user-data-dir),
// HOSTILE, HOSTILE_CASE, HOSTILE_HEAD (the markup the database holds as a
// host name, a case name and a subject, and a branch name), DEMOHOST (the
// demo's host, which m1 shares a case with), CPHOST, STEPCASE and CPCOMMIT
// (the host of the planted series of main, the case whose series steps up,
// named like markup, and the commit text, markup too, where it steps; its
// other case is flat), OHOST, OPEER and OCASE (the hosts and case of the
// comparisons by hand among which one gains -2055%, on OHOST).
// PERFD_TEST_SLOW (tests/lib.sh) scales every wait's bound, as in the shell
// tests: a wait ends at its event, and only a wait that fails takes the
// whole bound. Prints "ok - ..." or "not ok - ..." per check, like the shell
// tests, and exits 1 when any failed.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const BASE = process.env.BASE;
const DB = process.env.DB;
const SHOTS = process.env.SHOTS;
const HOSTILE = process.env.HOSTILE;
const HOSTILE_CASE = process.env.HOSTILE_CASE;
const HOSTILE_HEAD = process.env.HOSTILE_HEAD;
const DEMOHOST = process.env.DEMOHOST;
const KASE = process.env.KASE;
const CPHOST = process.env.CPHOST;
const STEPCASE = process.env.STEPCASE;
const CPCOMMIT = process.env.CPCOMMIT;
const OHOST = process.env.OHOST;
const OPEER = process.env.OPEER;
const OCASE = process.env.OCASE;
const SLOW = Number(process.env.PERFD_TEST_SLOW) > 0 ? Number(process.env.PERFD_TEST_SLOW) : 1;
// slowMs(ms): a wait's bound of ms on a quiet machine, scaled.
const slowMs = (ms) => Math.round(ms * SLOW);
// Whether this kernel keeps CPU pressure (PSI), which perfd records per process.
const psi = (() => {
	try {
		return readFileSync('/proc/pressure/cpu', 'utf8').startsWith('some ');
	} catch {
		return false;
	}
})();
let failed = 0;

function check(desc, cond, detail) {
	if (cond) {
		console.log(`ok - ${desc}`);
	} else {
		failed++;
		console.log(`not ok - ${desc}`);
		if (detail !== undefined)
			console.log(`  # ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`.slice(0, 2000));
	}
}

async function api(path) {
	const res = await fetch(BASE + '/api/v1' + path);
	if (!res.ok)
		throw new Error(`${path}: ${res.status} ${await res.text()}`);
	return res.json();
}

function sql(stmt) {
	return execFileSync('sqlite3', [DB, stmt], { encoding: 'utf8' }).trim();
}

const browser = await chromium.launchPersistentContext(process.env.PROFILE, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	viewport: { width: 1400, height: 900 },
});
const page = browser.pages()[0] || await browser.newPage();
page.setDefaultTimeout(slowMs(30000));
const dialogs = [];
const pageErrors = [];
page.on('dialog', (d) => {
	dialogs.push(d.message());
	d.dismiss().catch(() => {});
});
page.on('pageerror', (e) => pageErrors.push(e.message));
page.on('console', (m) => {
	if (m.type() === 'error' && !/favicon/.test(m.location().url || ''))
		pageErrors.push('console: ' + m.text());
});

// Opens a page and waits until its script says it is drawn (or failed).
async function open(path, shot) {
	await page.goto(BASE + path);
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: slowMs(15000) });
	const st = await page.evaluate(() => document.body.dataset.state);
	const err = await page.evaluate(() => document.getElementById('error')?.textContent || '');
	check(`${path} drew without an error`, st === 'ready', err);
	if (shot)
		await page.screenshot({ path: `${SHOTS}/${shot}.png`, fullPage: true });
}

const texts = (sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));
// The text of the element sel, or '' when the page has none.
const textOf = async (sel) => (await page.$(sel) ? page.textContent(sel) : '');
const pctOf = (g) => (g === null ? 'n/a' : (g * 100).toFixed(3) + '%');
const byTime = (a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id);

// In the page: the chart's area and each point where Chart.js drew it (px,
// py), with its data (y, beyond, label, note) and point style; gain holds
// the gain medians, values the raw values, lines each overlaid host's line.
function chartGeometry() {
	const ch = Chart.getChart(document.getElementById('chart'));
	const pts = (i) => ch.getDatasetMeta(i).data.map((el, k) => {
		const p = ch.data.datasets[i].data[k];
		return { px: el.x, py: el.y, y: p.y, beyond: p.beyond ?? null, style: el.options.pointStyle,
			note: p.note ?? '', label: p.clipLabel ?? null };
	});
	const sets = ch.data.datasets.map((d, i) => ({ label: d.label, i }));
	const gain = sets.find((d) => /^gain median/.test(d.label));
	return {
		top: ch.chartArea.top, bottom: ch.chartArea.bottom, height: ch.chartArea.bottom - ch.chartArea.top,
		gainMin: ch.scales.gain.min, valueMax: ch.scales.value ? ch.scales.value.max : null,
		gain: gain ? pts(gain.i) : [],
		values: sets.filter((d) => /^(old|new) values/.test(d.label)).flatMap((d) => pts(d.i)),
		lines: gain ? [] : sets.map((d) => pts(d.i)),
	};
}

// Ticks (or unticks) the timeline's "Show the whole range" and waits for
// the chart drawn anew; false when the page has no such box.
async function toggleRange(on) {
	if (await page.$('#whole-range') === null)
		return false;
	await page.click('#whole-range');
	await page.waitForSelector(on ? '#whole-range:checked' : '#whole-range:not(:checked)');
	return true;
}

// Hovers the chart's point drawn at (px, py) and returns its tooltip's lines
// ([] when none shows).
async function hoverTip(pt) {
	const box = await (await page.$('#chart')).boundingBox();
	await page.mouse.move(box.x + pt.px, box.y + pt.py);
	await page.waitForFunction(() => Chart.getChart(document.getElementById('chart')).tooltip.opacity > 0, null,
		{ timeout: slowMs(5000) }).catch(() => {});
	const lines = await page.evaluate(() => {
		const t = Chart.getChart(document.getElementById('chart')).tooltip;
		return t && t.opacity > 0 ? t.body.flatMap((b) => b.lines) : [];
	});
	await page.mouse.move(0, 0);
	return lines;
}

try {
	// ---- overview ----
	const hosts = (await api('/hosts')).hosts;
	const jobs = (await api('/jobs?limit=30')).jobs;
	await open('/', 'overview');
	const hostCells = await texts('table.hosts tbody tr td:first-child');
	check('overview lists every host the API has', JSON.stringify(hostCells.slice().sort()) ===
		JSON.stringify(hosts.map((x) => x.name).sort()), { page: hostCells, api: hosts.map((x) => x.name) });
	check('the hostile host name shows as literal text', hostCells.includes(HOSTILE), hostCells);
	check('the hostile branch name and subject show as literal text',
		(await texts('table.jobs tbody tr td:nth-child(2)')).includes(HOSTILE_HEAD) &&
		(await texts('table.jobs tbody tr td:nth-child(4)')).includes(HOSTILE_CASE));
	check('the hostile case name shows as literal text', (await texts('table.comparisons tbody tr td:nth-child(4)')).includes(HOSTILE_CASE));
	check('no element was made from them', await page.evaluate(() =>
		[...document.querySelectorAll('script')].every((s) => !s.textContent.includes('alert')) &&
		document.querySelectorAll('main img').length === 0));
	const jobRows = await page.$$eval('table.jobs tbody tr', (r) => r.length);
	check('overview lists the jobs', jobRows === jobs.length && jobs.length > 0, { page: jobRows, api: jobs.length });
	const heads = await texts('table.jobs tbody tr td:nth-child(2)');
	check('with their heads', JSON.stringify(heads) === JSON.stringify(jobs.map((j) => j.head)), heads);
	const verdictLinks = await page.$$eval('table.jobs a[href*="comparison.html"]', (a) => a.length);
	const apiVerdicts = jobs.reduce((n, j) => n + j.comparisons.length, 0);
	check('one verdict link per comparison of a job', verdictLinks === apiVerdicts, { page: verdictLinks, api: apiVerdicts });
	// The demo ran without a host profile; its host still names the Vulkan
	// device its steps ran on (docs/hosts.md, "Without a profile").
	const demoHost = hosts.find((x) => x.name === DEMOHOST);
	const device = demoHost && demoHost.fingerprint && demoHost.fingerprint.devices &&
		demoHost.fingerprint.devices[0];
	const deviceCell = await page.$$eval('table.hosts tbody tr', (rs, name) => rs
		.map((tr) => [...tr.children])
		.filter((td) => td[0].textContent === name)
		.map((td) => td[1].textContent)[0], DEMOHOST);
	check('the demo host\'s Vulkan device is shown', device && deviceCell === device.name,
		{ api: device ? device.name : null, page: deviceCell });

	// ---- each host's newest heartbeat at the hub ----
	const shownHosts = await page.$$eval('table.hosts tbody tr', (rs) => rs.map((tr) => {
		const td = [...tr.children];
		return {
			name: td[0].textContent, push: td[5].textContent,
			pushTitle: td[5].querySelector('time') ? td[5].querySelector('time').getAttribute('title') : null,
			state: td[6].textContent, backlog: td[7].textContent, high: td[7].querySelector('.backlog') !== null,
			sandbox: td[8].textContent, unsandboxed: td[8].querySelector('.unsandboxed') !== null,
			standing: td[10].textContent,
		};
	}));
	const rowOf = (name) => shownHosts.find((r) => r.name === name) || {};
	const pushed = hosts.filter((x) => x.last_push).map((x) => x.name).sort();
	check('the API lists the hosts heard from, gfx1201 by its heartbeat alone',
		JSON.stringify(pushed) === JSON.stringify([DEMOHOST, 'gfx1201', 'm1', 'm1-max'].sort()), pushed);
	check('each host\'s last push: how long ago, the time in its title', hosts.every((x) => (x.last_push
		? rowOf(x.name).pushTitle === x.last_push && /^(just now|\d+ (min|h) ago)$/.test(rowOf(x.name).push)
		: rowOf(x.name).push === 'never')), { page: shownHosts, api: hosts });
	check('its state and backlog as the API says', hosts.every((x) => rowOf(x.name).state === (x.state ?? '\u2014') &&
		rowOf(x.name).backlog === (x.backlog === null ? '\u2014' : String(x.backlog))), { page: shownHosts, api: hosts });
	check('a backlog over 0 is highlighted, and no other', hosts.every((x) => rowOf(x.name).high === (x.backlog > 0)) &&
		rowOf(DEMOHOST).high && rowOf(DEMOHOST).backlog === '2', shownHosts);
	const sandboxShown = (x) => (x.sandbox === null ? 'unknown'
		: x.sandbox === 'none' || x.sandbox.startsWith('none: ') ? x.sandbox : 'sandboxed');
	check('each host\'s sandbox as the API says: sandboxed, none and why, or unknown',
		hosts.every((x) => rowOf(x.name).sandbox === sandboxShown(x)) &&
		rowOf('m1').sandbox === 'sandboxed' && rowOf('gfx1201').sandbox === 'unknown' &&
		rowOf(DEMOHOST).sandbox.startsWith('none: no sandbox here'), { page: shownHosts, api: hosts });
	check('no sandbox is highlighted, and nothing else', hosts.every((x) =>
		rowOf(x.name).unsandboxed === (x.sandbox !== null && x.sandbox.startsWith('none'))) &&
		rowOf(DEMOHOST).unsandboxed, shownHosts);
	check('a host quarantined by its heartbeat stands so, with its fault and the commit it holds',
		/quarantined.*GPU hang \(ring gfx timeout\)1 commit held: the machine went down while case 'mm' ran$/.test(rowOf('gfx1201').standing) &&
		rowOf('m1').standing === 'in service', shownHosts);

	// ---- following a verdict cell to its receipt ----
	// A demo job's (the planted series' jobs, newer, have no builds).
	const demoJob = (j) => j.comparisons.some((c) => c.case === KASE);
	const first = jobs.find(demoJob);
	const cid = first.comparisons[0].id;
	await Promise.all([
		page.waitForURL(/comparison\.html\?id=/),
		page.click(`table.jobs a[href="/static/comparison.html?id=${cid}"] .verdict`),
	]);
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
	check('the verdict cell leads to its receipt', page.url().endsWith(`/static/comparison.html?id=${cid}`), page.url());
	const receipt = await api(`/comparisons/${cid}`);
	const procRows = await page.$$eval('#process-table tbody tr', (r) => r.length);
	check('the receipt shows every process', procRows === receipt.processes.length && procRows > 0,
		{ page: procRows, api: receipt.processes.length });
	const stageRows = await texts('table.stages tbody tr td:last-child');
	check('the receipt shows each stage and its verdict', stageRows.length === receipt.stages.length && stageRows.length > 0 &&
		stageRows.every((v, i) => v === receipt.stages[i].verdict), { page: stageRows, api: receipt.stages });
	const calLinks = await page.$$eval('a[href^="/static/comparison.html?id="]', (as) => as.map((a) => a.getAttribute('href')));
	check('and links each A/A of its calibration', receipt.calibration.every((c) => calLinks.includes(`/static/comparison.html?id=${c}`)),
		{ page: calLinks, api: receipt.calibration });
	const seqs = (await texts('#process-table tbody tr td:first-child')).map(Number);
	check('in execution order', JSON.stringify(seqs) === JSON.stringify(receipt.processes.map((p) => p.seq).sort((a, b) => a - b)), seqs);
	const arms = await texts('#process-table tbody tr td:nth-child(2)');
	check('with each process\'s arm', JSON.stringify(arms) === JSON.stringify(receipt.processes.map((p) => p.arm)), arms);
	// The CPU pressure each process ran beside, as recorded: a number
	// where the kernel keeps it (/proc/pressure/cpu), "not kept" where not.
	const cpuWait = await texts('#process-table tbody tr td.cpu-wait');
	check('and the CPU pressure it ran beside, as recorded', JSON.stringify(cpuWait) === JSON.stringify(receipt.processes.map((p) =>
		p.cpu_wait_ms === null ? 'not kept' : String(Number(p.cpu_wait_ms.toPrecision(6))))) &&
		receipt.processes.every((p) => p.cpu_wait_ms === null ? !psi : p.cpu_wait_ms >= 0), { page: cpuWait });
	const pairRows = await page.$$eval('table.pairs tbody tr', (r) => r.length);
	check('the pair table has every pair', pairRows === receipt.pairs.length, { page: pairRows, api: receipt.pairs.length });
	const gainText = await page.textContent('#gain-median');
	check('the gain is a percentage with three decimals', gainText === (receipt.gain.median * 100).toFixed(3) + '%', gainText);
	check('the rule\'s name and version', (await page.textContent('#rule-name')) + '/' + (await page.textContent('#rule-version')) === receipt.rule);
	check('the rule links to its document on the hub', (await page.getAttribute('#rule-doc', 'href')) === '/docs/rule.md'
		&& (await (await page.request.get(BASE + '/docs/rule.md')).text()).startsWith('# '));
	const body = await page.textContent('main');
	check('both binaries\' hashes', body.includes(receipt.old.sha256) && body.includes(receipt.new.sha256));
	check('both manifests, short', body.includes(receipt.old.manifest.slice(0, 12)) && body.includes(receipt.new.manifest.slice(0, 12)));
	check('the job\'s commit and base', body.includes(receipt.job.commit) && body.includes(receipt.job.base));
	check('links to both builds', await page.$(`a[href="/static/build.html?id=${receipt.builds.base}"]`) !== null &&
		await page.$(`a[href="/static/build.html?id=${receipt.builds.head}"]`) !== null);
	const csvHref = await page.getAttribute('#csv-link', 'href');
	const csv = await (await fetch(BASE + csvHref)).text();
	check('the CSV link gives a row per process', csv.trim().split('\n').length === receipt.processes.length + 1, csv.slice(0, 300));
	const jsonHref = await page.getAttribute('#json-link', 'href');
	check('the JSON link gives the receipt', (await (await fetch(BASE + jsonHref)).json()).comparison === cid);
	await page.click('#fingerprint summary');
	await page.screenshot({ path: `${SHOTS}/receipt.png`, fullPage: true });

	// ---- recompute: ok, then a tampered gain is a mismatch ----
	await page.click('#recompute');
	await page.waitForSelector('#verify-result[data-state="ok"], #verify-result[data-state="mismatch"], #verify-result[data-state="error"]');
	check('recompute says ok on the stored rows', await page.$('#verify-ok') !== null, await page.textContent('#verify-result'));
	await page.screenshot({ path: `${SHOTS}/receipt-verify-ok.png` });
	sql(`UPDATE comparisons SET gain_median = gain_median + 0.0123 WHERE id = ${cid}`);
	await page.reload();
	await page.waitForSelector('body[data-state="ready"]');
	await page.click('#recompute');
	await page.waitForSelector('#verify-result[data-state="ok"], #verify-result[data-state="mismatch"], #verify-result[data-state="error"]');
	const mism = await texts('#verify-bad li.mismatch');
	const apiMism = (await api(`/comparisons/${cid}/verify`)).mismatches;
	check('after tampering, recompute shows the mismatch', mism.length > 0 && JSON.stringify(mism) === JSON.stringify(apiMism),
		{ page: mism, api: apiMism });
	check('naming the gain', mism.some((m) => /gain/i.test(m)), mism);
	await page.screenshot({ path: `${SHOTS}/receipt-verify-mismatch.png` });

	// ---- timeline ----
	const host = receipt.host, kase = receipt.case;
	const tl = await api(`/timeline?host=${encodeURIComponent(host)}&case=${encodeURIComponent(kase)}&limit=1000`);
	await open(`/static/timeline.html?host=${encodeURIComponent(host)}&case=${encodeURIComponent(kase)}`, 'timeline');
	const drawn = await page.evaluate(() => {
		const ch = Chart.getChart(document.getElementById('chart'));
		return ch.data.datasets.map((d, i) => ({ label: d.label, n: d.data.length, drawn: ch.getDatasetMeta(i).data.length,
			real: d.data.filter((p) => p.y !== null).length }));
	});
	let procs = 0;
	for (const p of tl.points) {
		const r = await api(`/comparisons/${p.id}`);
		procs += r.processes.filter((x) => !x.warmup).length;
	}
	const raw = drawn.filter((d) => /^(old|new) values/.test(d.label));
	const rawN = raw.reduce((n, d) => n + d.n, 0);
	check('the chart has the old and the new values', raw.length === 2, drawn);
	check('one raw point per process in the API', rawN === procs && procs > 0, { chart: rawN, api: procs });
	check('and Chart.js made an element for each', raw.every((d) => d.drawn === d.n), drawn);
	const med = drawn.find((d) => /^gain median/.test(d.label));
	check('one gain median per comparison', med && med.n === tl.points.length && med.drawn === med.n, { drawn, points: tl.points.length });
	const hashes = tl.points.slice().sort(byTime).map((p) => p.fingerprint_hash);
	const nchanges = hashes.filter((x, i) => i > 0 && x !== hashes[i - 1]).length;
	const mark = drawn.find((d) => d.label === 'fingerprint change');
	check('the stored fingerprints change in this timeline', nchanges > 0, hashes);
	check('a fingerprint-change marker for each change', mark && mark.real === 2 * nchanges, { mark, nchanges });
	const changeRows = await page.$$eval('table.changes tbody tr', (r) => r.length);
	check('and a row naming each', changeRows === nchanges, changeRows);
	check('the row says what changed', (await page.textContent('table.changes')).includes('kernel_release'));
	// The demo's heads are demo/* branches, none of them main: no change
	// point, and why.
	const demoCp = await api(`/changepoints?host=${encodeURIComponent(host)}&case=${encodeURIComponent(kase)}`);
	check('the demo\'s comparisons are no series of main, as the API notes', demoCp.changepoints.length === 0 &&
		demoCp.series.points === 0 && demoCp.note === 'branch \'main\' has no comparison of this host and case', demoCp);
	check('  the page says so', (await page.textContent('#no-changepoints')) === `No change point: ${demoCp.note}.`,
		await page.textContent('#changepoints'));
	check('  and that the comparisons shown, of other heads, take no part', (await page.textContent('#cp-branch'))
		.startsWith(`${tl.points.length} of the ${tl.points.length} comparisons shown are not of branch main (demo/`), await page.textContent('#changepoints'));
	check('  and draws no change-point marker', (drawn.find((d) => d.label === 'change point') || { real: -1 }).real === 0, drawn);
	// The demo's gains and raw values are measured on this machine: a step
	// whose gain or process the machine moved far from the bulk (a shared
	// counter's -167% on 2 CPUs) lies beyond its axis. What the page
	// guarantees is checked, not where the timings fall: every point drawn,
	// one beyond an axis at that axis's edge and listed with its figure,
	// any other within the chart.
	const dgeo = await page.evaluate(chartGeometry);
	const dListed = await texts('#clipped-list li');
	const atEdge = (p) => Math.abs(p.py - (p.beyond === 'above' ? dgeo.top : dgeo.bottom)) <= 1;
	const within = (p) => p.py >= dgeo.top - 1 && p.py <= dgeo.bottom + 1;
	const dGainOut = dgeo.gain.filter((p) => p.beyond !== null);
	const dOut = dgeo.values.filter((p) => p.beyond !== null);
	check('  and draws every gain median: one beyond the gain axis at its edge, labelled and listed; any other within',
		dgeo.gain.length === tl.points.length && dGainOut.every((p) => atEdge(p) && typeof p.label === 'string') &&
		dgeo.gain.every((p) => p.beyond !== null || within(p)) &&
		dListed.filter((t) => / gain of #\d+: /.test(t)).length === dGainOut.length, { out: dGainOut, listed: dListed });
	check('  a raw value beyond the value axis is drawn at its edge, and listed; any other within the chart',
		dOut.every(atEdge) && dgeo.values.every((p) => p.beyond !== null || within(p)) &&
		dListed.every((t) => / ((old|new) values|gain) of #\d+: /.test(t)) &&
		dListed.some((t) => / (old|new) values of #\d+: /.test(t)) === (dOut.length > 0) &&
		(await page.$('#whole-range') !== null) === (dOut.length + dGainOut.length > 0), { out: dOut, listed: dListed });

	// ---- another host's gain medians overlaid ----
	const boxes = await page.$$eval('#overlay input[type=checkbox]', (es) => es.map((e) => e.value));
	check('the timeline offers the other hosts of its case', boxes.includes('m1') && !boxes.includes(host), boxes);
	await Promise.all([page.waitForURL(/also=m1/), page.click('#overlay input[value="m1"]')]);
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
	await page.screenshot({ path: `${SHOTS}/timeline-overlay.png`, fullPage: true });
	const tlm = await api(`/timeline?host=m1&case=${encodeURIComponent(kase)}&limit=1000`);
	const over = await page.evaluate(() => {
		const ch = Chart.getChart(document.getElementById('chart'));
		return ch.data.datasets.map((d, i) => ({ label: d.label, n: d.data.length, drawn: ch.getDatasetMeta(i).data.length,
			ys: d.data.map((p) => p.y) }));
	});
	check('ticking m1 overlays it: a line per host, named in the legend', JSON.stringify(over.map((d) => d.label)) === JSON.stringify([host, 'm1']), over);
	check('each with its host\'s gain medians', over.length === 2 && over[0].n === tl.points.length && over[1].n === tlm.points.length &&
		tlm.points.length === 2 && over.every((d) => d.drawn === d.n), { chart: over, api: [tl.points.length, tlm.points.length] });
	const m1Gains = tlm.points.slice().sort((a, b) => (a.created_at < b.created_at ? -1 : 1)).map((p) => p.gain * 100);
	check('m1\'s line is m1\'s gains', over.length === 2 && over[1].ys.every((y, i) => Math.abs(y - m1Gains[i]) < 1e-9), { chart: over[1], api: m1Gains });
	check('the comparisons of both hosts are listed', (await page.$$eval('table.points tbody tr', (r) => r.length)) === tl.points.length + tlm.points.length);
	check('and m1 stays ticked', await page.$eval('#overlay input[value="m1"]', (e) => e.checked));
	check('change points are left to one host\'s timeline, and said so', (await page.textContent('#no-changepoints')).startsWith('Change points are marked on one host'));

	// ---- change points: a step in the default branch's series ----
	const cpq = (kase) => new URLSearchParams({ host: CPHOST, case: kase }).toString();
	const stepCp = await api(`/changepoints?${cpq(STEPCASE)}`);
	check('the planted step is one change point of main, at its commit', stepCp.branch === 'main' && stepCp.series.points === 16 &&
		stepCp.changepoints.length === 1 && stepCp.changepoints[0].commit === CPCOMMIT && stepCp.changepoints[0].index === 8, stepCp);
	const cp0 = stepCp.changepoints[0] || {};
	const stepTl = (await api(`/timeline?${cpq(STEPCASE)}&limit=1000`)).points.slice().sort(byTime);
	const cpAt = stepTl.findIndex((p) => p.id === cp0.comparison);
	check('the timeline API marks its comparison', cpAt >= 0 && stepTl.filter((p) => p.changepoint).map((p) => p.id).join() === String(cp0.comparison), stepTl.map((p) => [p.id, p.changepoint]));
	await open(`/static/timeline.html?${cpq(STEPCASE)}`, 'timeline-changepoints');
	const cpSets = await page.evaluate(() => {
		const ch = Chart.getChart(document.getElementById('chart'));
		return ch.data.datasets.map((d) => ({ label: d.label, colour: d.borderColor, dash: d.borderDash || [],
			marks: d.data.filter((p) => p.y !== null).map((p) => ({ x: p.x, top: !!p.top, label: p.label ?? null, note: p.note ?? null })) }));
	});
	const cpSet = cpSets.find((d) => d.label === 'change point');
	const fpSet = cpSets.find((d) => d.label === 'fingerprint change');
	check('the chart marks the change point: one line before the comparison that starts the new level',
		cpSet && cpSet.marks.length === 2 && cpSet.marks.every((m) => m.x === cpAt - 0.5), { cpSet, cpAt });
	check('  solid and of another colour than the dashed fingerprint line', cpSet && fpSet && cpSet.dash.length === 0 &&
		fpSet.dash.length > 0 && cpSet.colour !== fpSet.colour, cpSets);
	const num6 = (v) => String(Number(v.toPrecision(6)));
	const shiftText = `+${(cp0.change * 100).toFixed(3)}%`;
	const topMark = cpSet ? cpSet.marks.find((m) => m.top) : null;
	check('  labelled with the level before and after and the shift', topMark && topMark.label ===
		`${num6(cp0.mean_before)} \u2192 ${num6(cp0.mean_after)} ${stepCp.series.metric} (${shiftText})`, topMark);
	// Hovering its diamond shows the tooltip, which names the comparison and p.
	const where = await page.evaluate(() => {
		const ch = Chart.getChart(document.getElementById('chart'));
		const i = ch.data.datasets.findIndex((d) => d.label === 'change point');
		const el = ch.getDatasetMeta(i).data.find((e, k) => ch.data.datasets[i].data[k].top);
		return el ? { px: el.x, py: el.y } : null;
	});
	const tip = where ? await hoverTip(where) : null;
	check('  hovering it shows a tooltip naming the comparison, the levels and p', Array.isArray(tip) &&
		tip.some((l) => l.startsWith(`change point at #${cp0.comparison} (${CPCOMMIT.slice(0, 12)})`) && l.includes(shiftText) &&
			l.includes(`p = ${num6(cp0.p)}`) && l.includes('the fingerprint is the same')), tip);
	const cpRows = await page.$$eval('table.changepoints tbody tr', (rs) => rs.map((tr) => [...tr.children].map((td) => ({
		text: td.textContent, href: td.querySelector('a') ? td.querySelector('a').getAttribute('href') : null }))));
	check('a table lists the change point', cpRows.length === 1, cpRows);
	const row = cpRows[0] || [];
	check('  its commit, as text, linked to its head page', row[0] && row[0].text === CPCOMMIT.slice(0, 12) &&
		row[0].href === `/static/head.html?${new URLSearchParams({ commit: CPCOMMIT })}`, row[0]);
	check('  its receipt', row[1] && row[1].href === `/static/comparison.html?id=${cp0.comparison}` && row[1].text === `#${cp0.comparison}`, row[1]);
	check('  its place in the series', row[2] && row[2].text === `point 9 of 16`, row[2]);
	check('  the level before and after, the shift and p', row[3] && row[3].text === `${num6(cp0.mean_before)} ${stepCp.series.metric}` &&
		row[4].text === `${num6(cp0.mean_after)} ${stepCp.series.metric}` && row[5].text === shiftText && row[6].text === num6(cp0.p) &&
		cp0.p < 0.01 && cp0.change > 0.09 && cp0.change < 0.11, { row, cp0 });
	check('  and that the fingerprint did not change there', row[7] && row[7].text === 'same', row[7]);
	check('the page states the method and its parameters', /e-divisive-means version 1: E-divisive means with alpha 1, at least 4 points either side of a change, 199 permutations \(seed 0x70657266644350\), a change kept when p < 0\.01, at most 16\..* This one has 16 points of run2_ms\.$/
		.test(await page.textContent('#cp-method')), await page.textContent('#cp-method'));
	check('  and that the comparison by hand takes no part', /^1 of the 17 comparisons shown are not of branch main \(by hand\)/.test(await page.textContent('#cp-branch')),
		await page.textContent('#changepoints'));
	check('the markup in the case and commit made no element', await page.evaluate(() =>
		document.querySelectorAll('main img, main script').length === 0) && (await page.textContent('#title')).includes(STEPCASE));

	// The flat series: none, and no marker.
	const flatCp = await api(`/changepoints?${cpq('flat')}`);
	check('the flat series has no change point in the API', flatCp.series.points === 16 && flatCp.changepoints.length === 0 && flatCp.note === null, flatCp);
	await open(`/static/timeline.html?${cpq('flat')}`, 'timeline-flat');
	const flatSet = await page.evaluate(() => {
		const ch = Chart.getChart(document.getElementById('chart'));
		const d = ch.data.datasets.find((x) => x.label === 'change point');
		return d ? d.data.filter((p) => p.y !== null).length : -1;
	});
	check('  nor a marker on its chart', flatSet === 0, flatSet);
	check('  nor a table; the page says it keeps one level', await page.$('table.changepoints') === null &&
		(await page.textContent('#no-changepoints')) === 'No change point: the series keeps one level.', await page.textContent('#changepoints'));
	check('  with no note of other heads: every comparison is of main', await page.$('#cp-branch') === null);

	// ---- an outlier: the axes fit the bulk, the far point sits at the edge ----
	const oq = (x) => new URLSearchParams({ host: x, case: OCASE }).toString();
	const otl = (await api(`/timeline?${oq(OHOST)}&limit=1000`)).points.slice().sort(byTime);
	const far = otl.find((p) => p.gain !== null && p.gain < -20) || {};
	check('the outlier\'s timeline: 11 comparisons, one with a gain under -2000%', otl.length === 11 && far.gain < -20,
		otl.map((p) => p.gain));
	const farPct = pctOf(far.gain ?? null);
	await open(`/static/timeline.html?${oq(OHOST)}`, 'timeline-outlier');
	let geo = await page.evaluate(chartGeometry);
	const farAt = otl.indexOf(far);
	const bulk = geo.gain.filter((p, i) => i !== farAt);
	const spread = (pts) => (Math.max(...pts.map((p) => p.py)) - Math.min(...pts.map((p) => p.py))) / geo.height;
	check('the other points are not squashed: their gains span at least a quarter of the chart\'s height',
		bulk.length === 10 && spread(bulk) >= 0.25, { spread: spread(bulk), gain: geo.gain });
	const ofFar = (p) => p.note.startsWith(`#${far.id} `) && p.note.includes(', new, ');
	const bulkVals = geo.values.filter((p) => !ofFar(p));
	check('  nor are their values', bulkVals.length > 0 && spread(bulkVals) >= 0.25, { spread: spread(bulkVals) });
	const fp = geo.gain[farAt] || {};
	check('the outlier is drawn at the chart\'s bottom edge, a triangle apart from the circles',
		fp.beyond === 'below' && Math.abs(fp.py - geo.bottom) <= 1 && fp.style === 'triangle' &&
		bulk.every((p) => p.beyond === null && p.style === 'circle' && p.py > geo.top && p.py < geo.bottom), geo.gain);
	check('  labelled with its true gain', typeof fp.label === 'string' && fp.label.includes(farPct) &&
		fp.note.includes(farPct), fp);
	const farVals = geo.values.filter(ofFar);
	const farNew = (far.values || []).filter((v) => v.arm === 'new' && v.pair !== 0).length;
	check('  its new values beyond the value axis, drawn at its top edge', farVals.length === farNew && farNew >= 3 &&
		farVals.every((p) => p.beyond === 'above' && Math.abs(p.py - geo.top) <= 1 && p.note.includes('215.5 run2_ms')), farVals);
	const listed = await texts('#clipped-list li');
	check('the page lists what lies beyond the axes, with its values', listed.length === 2 &&
		listed.includes(`\u25bc gain of #${far.id}: ${farPct}`) && listed.includes(`\u25b2 new values of #${far.id}: 215.5 run2_ms`), listed);
	const farTip = await hoverTip(fp);
	check('  hovering the outlier shows its gain and that it is drawn at the edge', farTip.some((l) => l.includes(farPct) &&
		l.includes('beyond the axis')), farTip);
	const toggled = await toggleRange(true);
	check('a box offers the whole range', toggled);
	await page.screenshot({ path: `${SHOTS}/timeline-outlier-whole.png`, fullPage: true });
	geo = await page.evaluate(chartGeometry);
	check('ticking "Show the whole range" draws the outlier at its value, inside the chart', toggled && geo.gain.every((p) => p.beyond === null) &&
		geo.gainMin <= far.gain * 100 && Math.abs(geo.gain[farAt].y - far.gain * 100) < 1e-9 &&
		geo.gain[farAt].py > geo.top && geo.gain[farAt].py <= geo.bottom, geo);
	check('  and every value at its own', geo.values.every((p) => p.beyond === null) && geo.valueMax >= 215.5, geo.valueMax);
	check('  and says so', (await textOf('#clipped')).startsWith('The whole range: every point at its value'),
		await textOf('#clipped'));
	await toggleRange(false);
	geo = await page.evaluate(chartGeometry);
	check('  unticking it fits the bulk again', geo.gain[farAt].beyond === 'below', geo.gain[farAt]);

	// Overlaid with o0-peer: one gain axis, fitted to both hosts' bulk.
	await open(`/static/timeline.html?${oq(OHOST)}&${new URLSearchParams({ also: OPEER })}`, 'timeline-outlier-overlay');
	geo = await page.evaluate(chartGeometry);
	const overBulk = geo.lines.flatMap((l) => l.filter((p) => !p.beyond));
	const overFar = geo.lines.flatMap((l) => l.filter((p) => p.beyond));
	check('overlaid, the two hosts\' other points are not squashed either', geo.lines.length === 2 && overBulk.length === 13 &&
		spread(overBulk) >= 0.25, { spread: spread(overBulk), lines: geo.lines });
	check('  the outlier at the bottom edge, its gain labelled and listed', overFar.length === 1 && Math.abs(overFar[0].py - geo.bottom) <= 1 &&
		overFar[0].label.includes(farPct) && (await texts('#clipped-list li')).includes(`\u25bc gain of ${OHOST} #${far.id}: ${farPct}`), overFar);
	const overToggled = await toggleRange(true);
	geo = await page.evaluate(chartGeometry);
	check('  and the whole range shows it at its value', overToggled && geo.lines.flat().every((p) => p.beyond === null) && geo.gainMin <= far.gain * 100, geo.gainMin);

	// Its receipt and the overview say its gain as it is.
	await open(`/static/comparison.html?id=${far.id}`, null);
	check('the outlier\'s receipt shows its gain', (await page.textContent('#gain-median')) === farPct);
	check('  made by hand', (await textOf('#made-by')) === 'none: by hand with perfd pair', await textOf('#commits'));

	// ---- build page ----
	const jobFailed = jobs.find((j) => j.state === 'failed' && j.comparisons.length);
	const headBuild = (await api(`/comparisons/${jobFailed.comparisons[0].id}`)).builds.head;
	const build = await api(`/builds/${headBuild}`);
	await open(`/static/build.html?id=${headBuild}`, 'build');
	const log = await page.textContent('#build-log');
	check('the build log is shown as stored, as text', log === build.log && build.log.length > 0, { page: log.slice(0, 200), api: build.log.slice(0, 200) });
	check('markup in the log stayed text', await page.$('#build-log *') === null);
	const shown = (await texts('pre.runner-lines')).join('\n').split('\n');
	const lines = build.runner_results.flatMap((x) => x.lines.map((l) => l.line));
	check('every RESULT and SUMMARY line verbatim', lines.length > 0 && lines.every((l) => shown.includes(l)),
		{ page: shown, api: lines });
	check('a RESULT line is among them', lines.some((l) => l.startsWith('RESULT ')));
	const bodyB = await page.textContent('main');
	check('each runner binary\'s sha256', build.runner_results.every((x) => x.binary_sha256 && bodyB.includes(x.binary_sha256)));
	check('each artifact\'s sha256', build.artifacts.length > 0 && build.artifacts.every((a) => bodyB.includes(a.sha256)));

	// ---- head table ----
	const hj = jobs.find(demoJob);
	const cmpOfCommit = (await api(`/comparisons?commit=${hj.commit}&limit=500`)).comparisons;
	await open(`/static/head.html?job=${hj.id}`, 'head');
	const headRows = await page.$$eval('#head-table tbody tr', (r) => r.length);
	check('the head table has a row per comparison of its commit', headRows === cmpOfCommit.length && headRows > 0,
		{ page: headRows, api: cmpOfCommit.length });
	const cellLinks = await page.$$eval('#head-table tbody td', (tds) => tds.map((td) => td.querySelector('a')?.getAttribute('href') || null));
	check('every cell links to its receipt', cellLinks.every((x) => x && /^\/static\/comparison\.html\?id=\d+$/.test(x)), cellLinks);
	const gainCell = await page.textContent('#head-table tbody tr td:nth-child(5)');
	const r0 = await api(`/comparisons/${cmpOfCommit.slice().sort((a, b) => a.host.localeCompare(b.host) || a.case.localeCompare(b.case) || a.id - b.id)[0].id}`);
	check('its gain cell is the receipt\'s, with three decimals', gainCell === (r0.gain.median === null ? 'n/a' : (r0.gain.median * 100).toFixed(3) + '%'), gainCell);
	const range = await page.textContent('#head-table tbody tr td:nth-child(3)');
	check('the base run shows its median and range', range.includes('(') && range.includes(' to '), range);
	check('in the unit the receipt reads from the metric\'s name', r0.unit === 'ms' && range.includes(` ${r0.unit} (`), [r0.metric, r0.unit, range]);
	// The head is pull request 5's: a row per expected host above the table.
	const pulls = (await api(`/pulls?commit=${hj.commit}`)).pulls;
	check('the API knows the head as pull request 5', pulls.length === 1 && pulls[0].number === 5 && pulls[0].hosts.length === 5, pulls);
	const pullRows = await page.$$eval('table.pull-hosts tbody tr', (rs) => rs.map((tr) => {
		const td = [...tr.children];
		return { host: td[0].textContent, state: td[1].textContent, detail: td[2].textContent,
			href: td[1].querySelector('a') ? td[1].querySelector('a').getAttribute('href') : null };
	}));
	const ph = pulls.length ? pulls[0].hosts : [];
	check('the head page has a hosts table, a row per expected host', pullRows.length === ph.length && ph.length === 5, { page: pullRows, api: ph });
	check('each host\'s state and detail as the API says', ph.every((x, i) => pullRows[i] && pullRows[i].host === x.host &&
		pullRows[i].state === x.state && pullRows[i].detail === x.detail), { page: pullRows, api: ph });
	check('done, measuring, quarantined, silent and pending among them', JSON.stringify(pullRows.map((r) => r.state).sort()) ===
		JSON.stringify(['done', 'measuring', 'pending', 'quarantined', 'silent']), pullRows);
	check('a host with a job links its state to the job\'s page, the others link nothing', ph.every((x, i) => pullRows[i] &&
		pullRows[i].href === (x.job ? `/static/head.html?job=${x.job}` : null)) && ph.filter((x) => x.job).length === 2, pullRows);
	const pullText = pulls.length ? await page.textContent('section.pull') : '';
	check('with the base the hub fixed and how it found it', pulls.length && pullText.includes(pulls[0].base) &&
		pullText.includes(pulls[0].how === 'merge-base' ? 'the merge base with main' : 'the head of main'), pullText);
	await page.screenshot({ path: `${SHOTS}/head.png`, fullPage: true });
	const m1Job = ph.find((x) => x.host === 'm1');
	await Promise.all([page.waitForURL(/head\.html\?job=/), page.click(`table.pull-hosts a[href="/static/head.html?job=${m1Job.job}"]`)]);
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
	check('a host\'s state leads to its job\'s page', page.url().endsWith(`/static/head.html?job=${m1Job.job}`) &&
		(await page.textContent('#job')).includes(`#${m1Job.job}`), page.url());
	await page.goBack();
	await page.waitForSelector('body[data-state="ready"]');
	await Promise.all([page.waitForURL(/comparison\.html/), page.click('#head-table tbody tr td:nth-child(5) a')]);
	await page.waitForSelector('body[data-state="ready"]');
	check('a head-table cell leads to a receipt', /comparison\.html\?id=\d+$/.test(page.url()), page.url());

	// ---- the hostile strings everywhere they appear ----
	const hostileJob = jobs.find((j) => j.head === HOSTILE_HEAD);
	await open(`/static/head.html?job=${hostileJob.id}`, 'head-hostile');
	check('a hostile branch name is text in the head table\'s title', (await page.textContent('#title')).includes(HOSTILE_HEAD));
	check('a head that is no pull request\'s has no hosts table', await page.$('section.pull') === null);
	const hostileCmp = (await api(`/comparisons?host=${encodeURIComponent(HOSTILE)}`)).comparisons[0];
	await open(`/static/comparison.html?id=${hostileCmp.id}`, 'receipt-hostile');
	check('the hostile host is text on its receipt', (await page.textContent('#title')).includes(HOSTILE));
	check('its case name is text there too', (await page.textContent('#title')).includes(HOSTILE_CASE));
	check('and made no element', await page.$('main img') === null);
	check('it is an A/A run by hand, and says so', (await textOf('#made-by')) ===
		'none: an A/A run by hand with perfd pair: one program against itself, with the same arguments' &&
		(await page.textContent('#commits')).includes('same program with the same arguments'), await page.textContent('#commits'));
	await open(`/static/timeline.html?host=${encodeURIComponent(HOSTILE)}&case=${encodeURIComponent(hostileCmp.case)}`, 'timeline-hostile');
	check('the hostile timeline title is text', (await page.textContent('#title')).includes(HOSTILE));

	// ---- calibration: the A/As per host and case, and an A/A's receipt ----
	const cal = (await api('/calibration')).calibration;
	const latest = (await api('/comparisons?limit=100')).comparisons;
	await open('/', null);
	const calRows = await page.$$eval('table.calibration tbody tr', (rs) => rs.map((tr) => [...tr.children].map((td) => td.textContent)));
	check('the overview has a calibration row per host and case of the API', calRows.length === cal.length && cal.length > 0,
		{ page: calRows.length, api: cal.length });
	// The demo agent's A/As: as many as give the 12 gains a calibration needs.
	const demoCal = cal.find((c) => c.host !== HOSTILE && c.count >= 1 && c.gains >= 12);
	check('the demo\'s A/As are in it', demoCal !== undefined, cal);
	check('each row: host, case, A/As, verdicts, false verdict rate and noise as the API says', cal.every((c, i) => calRows[i] &&
		calRows[i][0] === c.host && calRows[i][1] === c.case && calRows[i][2] === String(c.count) &&
		calRows[i][3] === `${c.faster} / ${c.slower} / ${c.unchanged} / ${c.unresolved}` &&
		calRows[i][4] === pctOf(c.false_verdict_rate) && calRows[i][5] === pctOf(c.noise_median) &&
		calRows[i][6] === pctOf(c.noise_p90) && calRows[i][7] === String(c.gains)), { page: calRows, api: cal });
	check('and what each host sees: the MDE as the API says', cal.every((c, i) => calRows[i] &&
		calRows[i][8] === (c.mde_text ? (c.mde == null ? 'none' : `under ${pctOf(c.mde)} unseen`) : '-')) &&
		demoCal && demoCal.mde > 0, { page: calRows.map((r) => r[8]), api: cal.map((c) => c.mde) });
	const aaLatest = latest.filter((c) => c.kind === 'aa').length;
	const aaShown = await page.$$eval('table.comparisons .v-aa', (e) => e.length);
	check('the latest comparisons mark each A/A as such', aaShown === aaLatest && aaLatest > 0, { page: aaShown, api: aaLatest });
	check('and call none of them faster or slower', (await texts('table.comparisons .v-aa')).every((t) => !/faster|slower/.test(t)));
	// Who made each: its head, or in words what the API's made_by says.
	const madeBy = { calibration: () => 'the agent\'s calibration A/A',
		pair: (c) => (c.kind === 'aa' ? 'an A/A run by hand with perfd pair' : 'by hand with perfd pair') };
	const said = (c) => c.head ?? (madeBy[c.made_by] || (() => null))(c);
	const headCells = await texts('table.comparisons tbody tr td:nth-child(8)');
	check('the latest comparisons say who made each: a head, the agent\'s calibration, or perfd pair by hand',
		headCells.length === latest.length && latest.every((c, i) => headCells[i] === said(c)),
		{ page: headCells, api: latest.map((c) => [c.id, c.head, c.kind, c.made_by]) });
	const handAA = latest.findIndex((c) => c.host === HOSTILE);
	check('  the A/A run by hand is labelled so, not as the agent\'s', handAA >= 0 && latest[handAA].kind === 'aa' &&
		latest[handAA].made_by === 'pair' && headCells[handAA] === 'an A/A run by hand with perfd pair', headCells[handAA]);
	const farRow = latest.findIndex((c) => c.host === OHOST && c.gain < -20);
	check('  and the outlier\'s gain is shown as it is', farRow >= 0 &&
		(await texts('table.comparisons tbody tr td:nth-child(7)'))[farRow] === pctOf(latest[farRow].gain), farRow);
	const aaId = (demoCal || cal[0]).calibration[0];
	await Promise.all([
		page.waitForURL(/comparison\.html\?id=/),
		page.click(`table.calibration a[href="/static/comparison.html?id=${aaId}"]`),
	]);
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"]');
	const aaReceipt = await api(`/comparisons/${aaId}`);
	check('a calibration link leads to the A/A\'s receipt', page.url().endsWith(`/static/comparison.html?id=${aaId}`) && aaReceipt.kind === 'aa', page.url());
	check('which says it is the agent\'s calibration A/A, with its build', (await textOf('#made-by')).startsWith('none: the agent\'s calibration A/A, run to calibrate the case') &&
		await page.$(`a[href="/static/build.html?id=${aaReceipt.builds.base}"]`) !== null);
	check('its title calls it A/A', (await page.textContent('#title')).includes('A/A'));
	await page.screenshot({ path: `${SHOTS}/receipt-aa.png`, fullPage: true });

	// ---- alerts: the table, its hostile names as text, the triage form ----
	const apiAlerts = (await api('/alerts')).alerts;
	await page.goto(BASE + '/static/alerts.html');
	await page.waitForSelector('body[data-state]:not([data-state="loading"])');
	check('the alerts page is ready', await page.getAttribute('body', 'data-state') === 'ready', await page.textContent('#error'));
	const alertRows = await page.$$eval('table.alerts tbody tr', (rs) => rs.map((tr) => [...tr.children].map((td) => td.textContent)));
	check('a row per alert of the API', alertRows.length === apiAlerts.length && apiAlerts.length > 0, { page: alertRows.length, api: apiAlerts.length });
	check('the hostile host and branch show as literal text',
		alertRows.some((r) => r[1] === HOSTILE && r[3] === HOSTILE_HEAD), alertRows);
	check('its receipt is linked', await page.$(`table.alerts a[href="/static/comparison.html?id=${apiAlerts[0].comparison}"]`) !== null);
	check('a triage form with a token field', await page.$('#triage input[name="token"][type="password"]') !== null);
	await page.fill('#triage input[name="alert"]', String(apiAlerts[0].id));
	await page.fill('#triage input[name="token"]', 'f'.repeat(64));
	await page.click('#triage button[type="submit"]');
	await page.waitForSelector('#triage-result[data-status]');
	check('a triage with a token the hub never issued is refused, and said',
		(await page.getAttribute('#triage-result', 'data-status')) === '401' &&
		/401: the token is not one this hub issued/.test(await page.textContent('#triage-result')),
		await page.textContent('#triage-result'));
	check('  the token not kept in the field', (await page.inputValue('#triage input[name="token"]')) === '');
	await page.goto(BASE + '/');
	await page.waitForSelector('body[data-state="ready"]');
	check('the overview links the alerts page', await page.$('nav a[href="/static/alerts.html"]') !== null);
	const triRows = await page.$$eval('table.triage tbody tr', (rs) => rs.map((tr) => [...tr.children].map((td) => td.textContent)));
	check('the overview shows the false-alarm share per host', triRows.some((r) => r[0] === HOSTILE && r[1] === '1'), triRows);

	// ---- bad input: an unknown id is said, not a blank page ----
	await page.goto(BASE + '/static/comparison.html?id=999999');
	await page.waitForSelector('body[data-state]:not([data-state="loading"])');
	check('an unknown receipt says 404', /404/.test(await page.textContent('#error')), await page.textContent('#error'));
} catch (e) {
	check('the browser test ran to its end', false, e.stack || String(e));
}

check('no dialog opened', dialogs.length === 0, dialogs);
// The 401 is the refused triage's, shown in the page.
check('no script error on any page', pageErrors.filter((e) => !/404|401/.test(e)).length === 0, pageErrors);
await browser.close();
process.exit(failed ? 1 : 0);
