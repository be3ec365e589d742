// The overview: hosts and their standing (at a hub, what each host's
// newest heartbeat said and when it came), each host and case's calibration
// (its A/A comparisons), the latest heads with their verdicts, and the
// latest comparisons (including those made by hand with perfd pair, which
// belong to no head, and the agent's calibration A/As, each said as such).
import { getJSON, h, link, pct, hash, when, ago, verdictOf, madeByWords, state, table, fill, fail, ready, deviceOf } from './common.js';

// What the host's newest heartbeat says of its builds' sandbox: sandboxed
// (its name in the title), none and why, highlighted, or unknown (no
// heartbeat, or an agent that does not say).
function sandboxCell(sandbox) {
	if (sandbox === null || sandbox === undefined)
		return h('span', { class: 'muted' }, 'unknown');
	if (sandbox === 'none' || sandbox.startsWith('none: '))
		return h('span', { class: 'unsandboxed' }, sandbox);
	return h('span', { title: sandbox }, 'sandboxed');
}

function hostRows(hosts, casesByHost) {
	return hosts.map((x) => {
		const d = deviceOf(x.fingerprint);
		const standing = x.quarantined
			? h('span', { class: 'quarantined' }, 'quarantined', x.since ? ' since ' : '',
				x.since ? when(x.since) : null, x.fault ? ': ' : '', x.fault ? h('code', {}, x.fault) : null)
			: h('span', {}, 'in service');
		// The commits held on it (docs/hosts.md), the newest said.
		const held = x.held
			? h('div', { class: 'quarantined' }, `${x.held} commit${x.held === 1 ? '' : 's'} held`,
				x.hold ? ': ' : '', x.hold ? h('code', {}, x.hold) : null)
			: null;
		const cases = [...(casesByHost.get(x.name) || [])].sort();
		const none = () => h('span', { class: 'muted' }, '\u2014');
		return [
			h('strong', {}, x.name),
			d.device ?? h('span', { class: 'muted' }, d.note ?? 'no Vulkan device in its fingerprint'),
			d.driver ?? h('span', { class: 'muted' }, '\u2014'),
			d.kernel ?? h('span', { class: 'muted' }, '\u2014'),
			hash(x.fingerprint_hash),
			ago(x.last_push),
			x.state ?? none(),
			x.backlog === null || x.backlog === undefined ? [none(), '.num']
				: [h('span', { class: x.backlog > 0 ? 'backlog' : null }, String(x.backlog)), '.num'],
			sandboxCell(x.sandbox),
			when(x.heartbeat),
			h('span', {}, standing, held),
			cases.length
				? cases.map((c, i) => [i ? ', ' : '', link('timeline.html', { host: x.name, case: c }, c)])
				: h('span', { class: 'muted' }, 'none'),
		];
	});
}

function calibrationRows(list) {
	return list.map((c) => [
		h('strong', {}, c.host),
		link('timeline.html', { host: c.host, case: c.case }, c.case),
		[String(c.count), '.num'],
		[`${c.faster} / ${c.slower} / ${c.unchanged} / ${c.unresolved}`, '.num'],
		[pct(c.false_verdict_rate), '.num'],
		[pct(c.noise_median), '.num'],
		[pct(c.noise_p90), '.num'],
		[String(c.gains), '.num'],
		// What the host can see: the MDE, with the sentence every view says.
		c.mde_text ? h('span', { title: c.mde_text }, c.mde == null ? 'none' : `under ${pct(c.mde)} unseen`) : '-',
		c.calibration.length
			? c.calibration.map((id, i) => [i ? ', ' : '', link('comparison.html', { id }, '#' + id)])
			: h('span', { class: 'muted' }, 'none'),
		hash(c.fingerprint_hash),
		when(c.newest_at),
	]);
}

// Per host, the triage of its raised alerts beside its A/As' false verdict
// rate over all its cases.
function triageRows(hosts, cal) {
	return hosts.map((t) => {
		const mine = cal.filter((c) => c.host === t.host);
		const count = mine.reduce((n, c) => n + c.count, 0);
		const wrong = mine.reduce((n, c) => n + c.faster + c.slower, 0);
		return [
			h('strong', {}, t.host),
			[link('alerts.html', { host: t.host, state: 'raised' }, String(t.raised)), '.num'],
			[String(t.triaged), '.num'],
			[link('alerts.html', { host: t.host, triage: 'false_alarm' }, String(t.false_alarms)), '.num'],
			[pct(t.false_alarm_share), '.num'],
			[count ? pct(wrong / count) : h('span', { class: 'muted' }, '\u2014'), '.num'],
		];
	});
}

function comparisonCell(c) {
	return h('div', {}, h('span', { class: 'muted' }, c.case + ': '),
		link('comparison.html', { id: c.id }, verdictOf(c.kind, c.verdict)), ' ',
		h('span', { class: 'num' }, pct(c.gain)), ' ',
		h('span', { class: 'muted' }, '#' + c.id));
}

function jobRows(jobs) {
	return jobs.map((j) => [
		[String(j.id), '.num'],
		link('head.html', { job: j.id }, j.head),
		hash(j.commit, 12),
		j.subject ?? '',
		[state(j.state), j.detail ? h('div', { class: 'muted' }, j.detail) : null],
		j.comparisons.length ? j.comparisons.map(comparisonCell) : h('span', { class: 'muted' }, 'no comparison'),
		link('head.html', { job: j.id }, 'table'),
	]);
}

function comparisonRows(list) {
	return list.map((c) => [
		link('comparison.html', { id: c.id }, '#' + c.id),
		when(c.created_at),
		c.host,
		link('timeline.html', { host: c.host, case: c.case }, c.case),
		c.metric ?? '',
		link('comparison.html', { id: c.id }, verdictOf(c.kind, c.verdict)),
		[pct(c.gain), '.num'],
		c.head ? (c.job ? link('head.html', { job: c.job }, c.head) : c.head)
			: h('span', { class: 'muted made-by' }, madeByWords(c.made_by, c.kind)),
		hash(c.commit, 12),
	]);
}

async function main() {
	const [hosts, cal, jobs, cmps, alerts] = await Promise.all([
		getJSON('/hosts'), getJSON('/calibration'), getJSON('/jobs?limit=30'), getJSON('/comparisons?limit=100'),
		getJSON('/alerts?limit=1'),
	]);
	const casesByHost = new Map();
	for (const c of cmps.comparisons) {
		if (!casesByHost.has(c.host))
			casesByHost.set(c.host, new Set());
		casesByHost.get(c.host).add(c.case);
	}
	fill('hosts', hosts.hosts.length
		? table(['Host', 'Device', 'Driver', 'Kernel', 'Fingerprint', 'Last push', 'State', ['Backlog', '.num'],
			'Sandbox', 'Last measured', 'Standing', 'Timelines'],
			hostRows(hosts.hosts, casesByHost), 'hosts')
		: h('p', { class: 'muted' }, 'No host has reported yet.'));
	fill('calibration', cal.calibration.length
		? table(['Host', 'Case (timeline)', ['A/As', '.num'], ['Faster / slower / unchanged / unresolved', '.num'],
			['False verdict rate', '.num'], ['Noise: |gain| median', '.num'], ['90th percentile', '.num'],
			['Over gains', '.num'], 'Sees (within max_pairs)', 'Calibration (its A/As)', 'Fingerprint', 'Newest A/A'],
			calibrationRows(cal.calibration), 'calibration')
		: h('p', { class: 'muted' }, 'No A/A comparison is stored yet: the agent runs them before a case\'s first comparison and when idle.'));
	fill('triage', alerts.hosts.length
		? table(['Host', ['Raised alerts', '.num'], ['Triaged', '.num'], ['False alarms', '.num'],
			['False-alarm share', '.num'], ['A/A false verdict rate', '.num']],
			triageRows(alerts.hosts, cal.calibration), 'triage')
		: h('p', { class: 'muted' }, 'No alert has been raised yet.'));
	fill('jobs', jobs.jobs.length
		? table([['Job', '.num'], 'Head', 'Commit', 'Subject', 'State', 'Verdicts (case: verdict, gain median)', 'Head table'],
			jobRows(jobs.jobs), 'jobs')
		: h('p', { class: 'muted' }, 'No head has been measured yet.'),
		jobs.next ? h('p', { class: 'note' }, 'Older jobs: ', h('a', { href: '/api/v1/jobs?before=' + jobs.next }, 'in the API')) : null);
	fill('comparisons', cmps.comparisons.length
		? table(['Receipt', 'Created', 'Host', 'Case (timeline)', 'Metric', 'Verdict', ['Gain, median', '.num'], 'Head', 'Commit'],
			comparisonRows(cmps.comparisons), 'comparisons')
		: h('p', { class: 'muted' }, 'No comparison is stored yet.'));
}

main().catch(fail).finally(ready);
