// The table of one head across hosts and cases, laid out like the tables
// contributors post: Chip | Input | base run (range) | head run (range) |
// Gain, median; every cell links to the comparison's receipt.
//   head.html?job=N       the comparisons of job N's commit
//   head.html?commit=HEX  the comparisons of a commit (a prefix of 4 to 40 digits)
// When the commit is a pull request's head the hub knows (GET /api/v1/pulls),
// a table of its expected hosts comes first: where each stands, linked to
// its job, and the base every host compares against.
import { getJSON, h, link, param, pct, num, hash, when, verdictOf, aaWords, state, hostState, table, facts, fill, fail, ready, deviceOf } from './common.js';

// A value's unit as the receipt says it, read from the metric's name by
// perfd's one table (docs/protocol.md, "Units": "read_mb_s" -> "MB/s"),
// else the metric's name.
function unit(r) {
	return r.unit ?? r.metric ?? '';
}

function run(arm, r) {
	if (!arm || arm.median === null || arm.median === undefined)
		return 'n/a';
	return `${num(arm.median)} ${unit(r)} (${num(arm.min)} to ${num(arm.max)})`;
}

async function jobById(id) {
	const page = await getJSON(`/jobs?limit=1&before=${BigInt(id) + 1n}`);
	const j = page.jobs[0];
	if (!j || String(j.id) !== String(id))
		throw new Error(`404: no job ${id}`);
	return j;
}

// The base the hub fixed, how, and a row per expected host.
function pullHosts(pulls) {
	return pulls.map((p) => h('section', { class: 'pull', 'data-pull': p.number },
		h('h2', {}, `Hosts: pull request #${p.number}`),
		facts([
			['Pull request', [`#${p.number} by `, p.author, p.trusted ? '' : ' (not trusted: waiting for a maintainer\'s /perfd run)',
				p.open ? '' : ' (no longer its head)']],
			['Head', hash(p.head)],
			['Base', [hash(p.base), ` (${p.how === 'merge-base' ? 'the merge base with' : 'the head of'} ${p.base_ref}, fixed by the hub when it first saw this head; every host compares against it)`]],
		]),
		table(['Host', 'State', 'Detail'], p.hosts.map((x) => [
			h('strong', {}, x.host),
			x.job ? link('head.html', { job: x.job }, hostState(x.state)) : hostState(x.state),
			x.detail,
		]), 'pull-hosts')));
}

async function main() {
	const jobId = param('job'), commitParam = param('commit');
	let job = null, commit;
	if (jobId && /^[1-9][0-9]{0,17}$/.test(jobId)) {
		job = await jobById(jobId);
		commit = job.commit;
	} else if (commitParam && /^[0-9a-f]{4,40}$/.test(commitParam)) {
		commit = commitParam;
	} else {
		throw new Error('this page needs ?job=N or ?commit=HEX');
	}
	const [cmps, pulls] = await Promise.all([getJSON(`/comparisons?commit=${commit}&limit=500`), getJSON(`/pulls?commit=${commit}`)]);
	const list = cmps.comparisons;
	const receipts = await Promise.all(list.map((c) => getJSON(`/comparisons/${c.id}`)));
	document.title = `perfd: ${job ? job.head : commit}`;
	fill('title', job ? `Head ${job.head} at ${commit.slice(0, 12)}` : `Commit ${commit}`);
	if (job) {
		fill('job', facts([
			['Job', [`#${job.id} `, state(job.state), job.detail ? ' ' + job.detail : '']],
			['Head', job.head],
			['Commit', hash(job.commit)],
			['Subject', job.subject ?? ''],
			['Base', job.base ? hash(job.base) : h('span', { class: 'muted' }, 'none')],
			['Finished', when(job.finished_at)],
		]));
	}
	fill('pulls', pullHosts(pulls.pulls));
	if (!receipts.length) {
		fill('table', h('p', { class: 'muted' }, 'No comparison of this commit is stored.'));
		fill('markdown', '');
		return;
	}
	// Host, then case, as a table is read.
	receipts.sort((a, b) => a.host.localeCompare(b.host) || a.case.localeCompare(b.case) || a.comparison - b.comparison);
	const base = job && job.base ? job.base.slice(0, 8) : 'base';
	const headName = job ? job.head : commit.slice(0, 8);
	const headers = ['Chip', 'Input', `${base} run (range)`, `${headName} run (range)`, 'Gain, median', 'Verdict'];
	const md = ['| ' + headers.join(' | ') + ' |', '|' + headers.map(() => ' --- ').join('|') + '|'];
	const rows = receipts.map((r) => {
		const d = deviceOf(r.fingerprint);
		const chip = d.device ? `${r.host} (${d.device})` : r.host;
		const input = `${r.case} (${r.metric ?? 'wall_ms'})`;
		const cells = [chip, input, run(r.old, r), run(r.new, r), pct(r.gain ? r.gain.median : null)];
		const flags = r.flags && r.flags.length ? ' ' + r.flags.join(', ') : '';
		// An A/A is pasted in the comment's words, never as a change.
		const said = r.kind === 'aa' ? aaWords(r.verdict) : (r.verdict ?? 'none');
		md.push('| ' + [...cells, said + flags].map((x) => x.replace(/[|\\]/g, '\\$&')).join(' | ') + ' |');
		const to = (content, cls) => h('td', { class: cls || null }, link('comparison.html', { id: r.comparison }, content));
		return h('tr', {},
			to(chip), to(input), to(cells[2], 'num'), to(cells[3], 'num'), to(cells[4], 'num'),
			h('td', {}, link('comparison.html', { id: r.comparison }, verdictOf(r.kind, r.verdict)), flags ? h('span', { class: 'muted' }, flags) : null));
	});
	fill('table', h('table', { class: 'head-table', id: 'head-table' },
		h('thead', {}, h('tr', {}, headers.map((x, i) => h('th', { class: i >= 2 && i <= 4 ? 'num' : null }, x)))),
		h('tbody', {}, rows)));
	fill('markdown', md.join('\n'));
}

main().catch(fail).finally(ready);
