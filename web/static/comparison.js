// The receipt of one comparison: what was compared (commits, binaries),
// the figures and the rule that made them, every pair and every process as
// stored, the environment, and a button that has the server recompute the
// figures from the raw rows (GET /api/v1/comparisons/ID/verify).
import { API, getJSON, h, link, param, pct, num, hash, when, verdict, verdictOf, madeByWords, table, facts, fill, fail, ready } from './common.js';

// "pairs-median/1" -> ["pairs-median", "1"]
function ruleParts(rule) {
	const i = rule ? rule.lastIndexOf('/') : -1;
	return i > 0 ? [rule.slice(0, i), rule.slice(i + 1)] : [rule || 'unknown', 'unknown'];
}

function buildLink(id) {
	return id ? link('build.html', { id }, 'build #' + id) : h('span', { class: 'muted' }, 'no build (made by hand)');
}

// What made it, beyond the job: how each kind without one came about.
const MADE_BY_DETAIL = {
	calibration: ', run to calibrate the case (before its first comparison, and when idle): one build against itself',
	pair: ': one program against itself, with the same arguments',
};

// madeBy: the API's made_by for this comparison (its list entry's).
function commits(r, madeBy) {
	const j = r.job;
	const rows = [];
	if (j) {
		rows.push(['Job', link('head.html', { job: j.id }, '#' + j.id + ' ' + j.head)]);
		rows.push(['Head commit (new)', hash(j.commit)]);
		rows.push(['Base commit (old)', j.base ? hash(j.base) : h('span', { class: 'muted' }, 'none')]);
	} else {
		rows.push(['Job', h('span', { class: 'muted', id: 'made-by' }, `none: ${madeByWords(madeBy, r.kind)}` +
			(r.kind === 'aa' ? MADE_BY_DETAIL[madeBy] ?? '' : ''))]);
	}
	const b = r.builds || {};
	return [
		facts(rows),
		table(['Arm', 'Build', 'Program', 'sha256', ['Size (bytes)', '.num'], 'Manifest'], [
			['old (base)', buildLink(b.base), h('code', {}, r.old.path ?? ''), hash(r.old.sha256), [String(r.old.size ?? ''), '.num'], hash(r.old.manifest, 12)],
			['new (head)', buildLink(b.head), h('code', {}, r.new.path ?? ''), hash(r.new.sha256), [String(r.new.size ?? ''), '.num'], hash(r.new.manifest, 12)],
		], 'binaries'),
		r.kind === 'aa'
			? h('p', { class: 'note' }, `An A/A: both arms ran the same ${madeBy === 'pair' ? 'program with the same arguments' : 'build'}, ` +
				'so any difference between them is noise.')
			: r.old.sha256 && r.old.sha256 === r.new.sha256
				? h('p', { class: 'note' }, 'The two programs have the same hash: what differs is outside the measured binary (its inputs, shaders or libraries).')
				: null,
	];
}

function figures(r) {
	const [name, version] = ruleParts(r.rule);
	const g = r.gain || {};
	const flags = r.flags && r.flags.length ? r.flags.map((f) => h('span', { class: 'flag' }, f)) : h('span', { class: 'muted' }, 'none');
	const reasons = r.reasons && r.reasons.length ? h('ul', {}, r.reasons.map((x) => h('li', {}, x))) : h('span', { class: 'muted' }, 'none');
	const s = r.settings || {};
	return [
		facts([
			['Verdict', r.kind === 'aa'
				? [verdictOf(r.kind, r.verdict), ' ', h('span', { class: 'muted' }, `the rule said ${r.verdict ?? 'nothing yet'}; an A/A compares one build with itself, so a verdict other than unchanged or unresolved is a false one, counted in the host's false verdict rate`)]
				: verdict(r.verdict)],
			['Gain, median', h('span', { class: 'num', id: 'gain-median' }, pct(g.median))],
			['Gain, range', `${pct(g.min)} to ${pct(g.max)}`],
			['Flags', flags],
			['Reasons', reasons],
			['Rule', [h('code', { id: 'rule-name' }, name), ', version ', h('code', { id: 'rule-version' }, version),
				' (', h('a', { id: 'rule-doc', href: '/docs/rule.md' }, 'the rule, in words'), ')']],
			['Metric', r.metric ? r.metric + (r.unit ? ` (${r.unit})` : '') : h('span', { class: 'muted' }, 'none')],
			['Settings', `${s.pairs} pairs${s.max_pairs && s.max_pairs !== s.pairs ? ` in the first stage, up to ${s.max_pairs}` : ''}, ${s.warmup} warm-up per arm, ${s.better === 'higher' ? 'higher' : 'lower'} is better, minimum effect ${pct(s.min_effect)}, noise threshold ${pct(s.noise)}, ${s.timeout_s} s per process`],
			['Calibration', r.calibration && r.calibration.length
				? [`${r.calibration.length} A/A comparison${r.calibration.length === 1 ? '' : 's'}: `,
					r.calibration.map((c, i) => [i ? ', ' : '', link('comparison.html', { id: c }, '#' + c)])]
				: h('span', { class: 'muted' }, 'none')],
			['Digests', r.digests ? [r.digests.equal ? 'equal: ' : 'differ: ', (r.digests.values || []).map((d, i) => [i ? ', ' : '', h('code', {}, d)])] : 'none printed'],
			['State', r.state ?? ''],
			['Created', when(r.created_at)],
		]),
		...stages(r),
		h('h3', {}, 'Arm figures'),
		table(['Arm', ['Median', '.num'], ['Min', '.num'], ['Max', '.num'], ['Spread', '.num']],
			['old', 'new'].map((a) => [a, [num(r[a].median), '.num'], [num(r[a].min), '.num'], [num(r[a].max), '.num'], [pct(r[a].spread), '.num']]),
			'arms'),
	];
}

// A stage's test: with its calibration's gain count, pairs-median/2.1's
// calibrated p values, and why a gate (2.1's scale gate, 2.2's load gate)
// left the calibration out.
function stageTest(g, p) {
	let t = g.calibration_gains ? `${g.test} (${g.calibration_gains} A/A gains)` : g.test;
	if (g.calibrated)
		t += `; calibrated p ${p(g.calibrated.p_faster)}, ${p(g.calibrated.p_slower)}, ` +
			`${p(g.calibrated.p_below)}, ${p(g.calibrated.p_above)}`;
	if (g.gate && !g.gate.passed)
		t += `; the pairs spread ${p(g.gate.spread_ratio)}x their calibration's ` +
			`(p ${p(g.gate.p)}): judged without the calibration`;
	if (g.load_gate && !g.load_gate.passed)
		t += `; ${g.load_gate.above} processes ran under more CPU pressure than all but the ` +
			`largest of the calibration's (p ${p(g.load_gate.p)}): judged without the calibration`;
	return t;
}

// pairs-median/2's, 2.1's and 2.2's stages: the pairs each judged, its test and p
// values (2.1, 2.2: the sign test's in the columns), its share of the bound and
// what it said (docs/rule.md, "Stages").
function stages(r) {
	if (!r.stages || !r.stages.length)
		return [];
	const p = (v) => (v === null || v === undefined ? '\u2013' : Number(v).toPrecision(4));
	return [
		h('h3', {}, 'Stages'),
		table([['Stage', '.num'], ['Pairs', '.num'], 'Test', ['p faster', '.num'], ['p slower', '.num'],
			['p under +min effect', '.num'], ['p over \u2212min effect', '.num'], ['Bound', '.num'], 'Verdict'],
		r.stages.map((g, i) => [[String(i + 1), '.num'], [String(g.pairs), '.num'],
			stageTest(g, p),
			[p(g.p_faster), '.num'], [p(g.p_slower), '.num'], [p(g.p_below), '.num'], [p(g.p_above), '.num'],
			[pct(g.alpha), '.num'], g.verdict]),
		'stages'),
	];
}

function pairs(r) {
	if (!r.pairs || !r.pairs.length)
		return h('p', { class: 'muted' }, 'No pair has both values.');
	return [
		h('p', { class: 'note' }, (r.settings || {}).better === 'higher'
			? 'gain = (new \u2212 old) / old, higher being better; positive: the head is faster.'
			: 'gain = (old \u2212 new) / old; positive: the head is faster.'),
		table([['Pair', '.num'], [`Old (${r.metric})`, '.num'], [`New (${r.metric})`, '.num'], ['Gain', '.num']],
			r.pairs.map((p) => [[String(p.pair), '.num'], [num(p.old), '.num'], [num(p.new), '.num'], [pct(p.gain), '.num']]),
			'pairs'),
	];
}

function exitText(p) {
	if (p.timed_out)
		return 'timed out';
	if (p.signal)
		return 'killed by signal ' + p.signal;
	if (p.exit === null || p.exit === undefined)
		return p.spawn_error ? 'not started' : 'none';
	return 'exit ' + p.exit;
}

function processes(r) {
	const rows = r.processes.map((p) => {
		const v = p.metrics && r.metric && Object.hasOwn(p.metrics, r.metric) ? p.metrics[r.metric] : null;
		const tr = h('tr', { class: p.warmup ? 'warmup' : p.valid ? null : 'invalid' },
			h('td', { class: 'num' }, String(p.seq)),
			h('td', {}, p.arm),
			h('td', { class: 'num' }, p.warmup ? 'warm-up' : String(p.pair)),
			h('td', { class: 'num' }, v === null ? 'none' : num(v)),
			h('td', {}, p.digest ? h('code', { class: 'hash' }, p.digest) : h('span', { class: 'muted' }, 'none')),
			h('td', {}, exitText(p)),
			h('td', {}, p.valid ? 'valid' : 'INVALID'),
			h('td', {}, [p.invalid_reason, p.spawn_error, p.fault,
				...(p.protocol_errors || []).map((e) => typeof e === 'string' ? e : JSON.stringify(e))]
				.filter((x) => x).join('; ')),
			h('td', { class: 'num' }, num(p.wall_ms)),
			h('td', { class: 'num cpu-wait' }, p.cpu_wait_ms === null || p.cpu_wait_ms === undefined
				? h('span', { class: 'muted' }, 'not kept') : num(p.cpu_wait_ms)),
			h('td', {}, when(p.started_at)));
		return tr;
	});
	const t = h('table', { class: 'processes', id: 'process-table' },
		h('thead', {}, h('tr', {}, ['Seq', 'Arm', 'Pair', `${r.metric ?? 'metric'}`, 'Digest', 'Exit', 'Valid', 'Reason', 'Wall ms', 'CPU wait ms', 'Started']
			.map((x) => h('th', {}, x)))),
		h('tbody', {}, rows));
	const lines = r.processes.flatMap((p) => (p.results || []).map((x) => `#${p.seq} ${x.line}`));
	return [t, lines.length ? [h('h3', {}, 'RESULT and SUMMARY lines'), h('pre', { class: 'lines' }, lines.join('\n'))] : null];
}

function environment(r) {
	return [
		h('details', { id: 'fingerprint' }, h('summary', {}, 'Fingerprint (device, driver, kernel, CPU)'),
			h('pre', {}, r.fingerprint ? JSON.stringify(r.fingerprint, null, 2) : 'none stored')),
		h('details', {}, h('summary', {}, 'Arguments and environment'),
			h('pre', {}, JSON.stringify(r.args ?? null, null, 2))),
	];
}

async function recompute(id) {
	const out = document.getElementById('verify-result');
	out.replaceChildren(h('span', { class: 'muted' }, 'recomputing…'));
	out.dataset.state = 'running';
	try {
		const v = await getJSON(`/comparisons/${id}/verify`);
		if (v.ok) {
			out.replaceChildren(h('span', { class: 'result-ok', id: 'verify-ok' },
				`ok: ${v.checked} stored figures recomputed from the raw rows by ${v.rule}, all equal`));
			out.dataset.state = 'ok';
		} else {
			out.replaceChildren(h('div', { class: 'result-bad', id: 'verify-bad' },
				v.error ? `cannot verify: ${v.error}` : `${v.mismatches.length} mismatch${v.mismatches.length === 1 ? '' : 'es'} (${v.checked} figures checked):`,
				h('ul', {}, v.mismatches.map((m) => h('li', { class: 'mismatch' }, m)))));
			out.dataset.state = 'mismatch';
		}
	} catch (e) {
		out.replaceChildren(h('span', { class: 'result-bad' }, String(e.message)));
		out.dataset.state = 'error';
	}
}

async function main() {
	const id = param('id');
	if (!id || !/^[1-9][0-9]{0,17}$/.test(id))
		throw new Error('this page needs ?id=N, the comparison\'s number');
	document.getElementById('recompute').addEventListener('click', () => recompute(id));
	// Who made it is the list's word (made_by); the receipt, perfd show's
	// object, does not say it.
	const [r, entry] = await Promise.all([getJSON(`/comparisons/${id}`),
		getJSON(`/comparisons?before=${BigInt(id) + 1n}&limit=1`)]);
	const madeBy = entry.comparisons.length && String(entry.comparisons[0].id) === id ? entry.comparisons[0].made_by : null;
	document.title = `perfd: receipt #${id}`;
	fill('title', `Receipt #${id}: `, r.case, ' on ', r.host, ' ', verdictOf(r.kind, r.verdict), ' ',
		h('span', { class: 'num' }, pct(r.gain ? r.gain.median : null)));
	fill('nav-extra', link('timeline.html', { host: r.host, case: r.case }, 'Timeline of ' + r.case + ' on ' + r.host),
		r.job ? link('head.html', { job: r.job.id }, 'Head table') : null);
	fill('downloads',
		h('a', { href: `${API}/comparisons/${id}?format=csv`, download: `perfd-comparison-${id}.csv`, id: 'csv-link' }, 'Download CSV (one row per process)'),
		h('a', { href: `${API}/comparisons/${id}`, download: `perfd-comparison-${id}.json`, id: 'json-link' }, 'Download JSON (this receipt)'));
	fill('commits', commits(r, madeBy));
	fill('figures', figures(r));
	fill('pairs', pairs(r));
	fill('processes', processes(r));
	fill('environment', environment(r));
}

main().catch(fail).finally(ready);
