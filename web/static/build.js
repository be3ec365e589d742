// One build: what was built (commit, tree, recipe), how it ended, the
// hashed artifacts, the contract runners' results with their RESULT and
// SUMMARY lines verbatim and each runner binary's sha256, and the log.
import { API, getJSON, h, param, num, hash, when, state, table, facts, fill, fail, ready, deviceOf } from './common.js';

function ending(x) {
	if (x.timed_out)
		return 'timed out';
	if (x.signal)
		return 'killed by signal ' + x.signal;
	if (x.exit === null || x.exit === undefined)
		return x.spawn_error ? 'not started: ' + x.spawn_error : 'none';
	return 'exit ' + x.exit;
}

function counts(l) {
	if (!l.counts)
		return '';
	return Object.entries(l.counts).map(([k, v]) => `${k}=${v}`).join(' ');
}

function runners(b) {
	if (!b.runner_results.length)
		return h('p', { class: 'muted' }, 'No contract runner ran on this build.');
	return b.runner_results.map((x) => {
		const failed = x.timed_out || x.signal || x.exit !== 0;
		return h('section', { class: 'runner' },
			h('h3', {}, x.runner, x.chunks > 1 ? ` (chunk ${x.chunk} of ${x.chunks})` : '', ': ',
				h('span', { class: 'state ' + (failed ? 's-failed' : 's-done') }, ending(x))),
			facts([
				['Runner binary sha256', hash(x.binary_sha256)],
				['Elapsed', `${num(x.elapsed_ms)} ms`],
				['Started', when(x.started_at)],
				['Ended', when(x.ended_at)],
			]),
			x.lines.length
				? [h('pre', { class: 'lines runner-lines' }, x.lines.map((l) => l.line).join('\n')),
					x.lines.some((l) => l.counts)
						? table(['Kind', 'Name', 'Device', 'Counts'],
							x.lines.filter((l) => l.kind === 'RESULT').map((l) => [l.kind, l.name ?? '', l.device ?? '', h('code', {}, counts(l))]))
						: null]
				: h('p', { class: 'muted' }, 'It printed no RESULT or SUMMARY line.'));
	});
}

async function main() {
	const id = param('id');
	if (!id || !/^[1-9][0-9]{0,17}$/.test(id))
		throw new Error('this page needs ?id=N, the build\'s number');
	document.getElementById('json-link').setAttribute('href', `${API}/builds/${id}`);
	const b = await getJSON(`/builds/${id}`);
	document.title = `perfd: build #${id}`;
	const d = deviceOf(b.fingerprint);
	fill('title', `Build #${b.id} on ${b.host}: `, state(b.state));
	fill('facts', facts([
		['Commit', hash(b.commit)],
		['Tree', hash(b.tree)],
		['Recipe hash', hash(b.recipe_hash)],
		['Host', b.host],
		['State', [state(b.state), b.detail ? ' ' + b.detail : '']],
		['Ending', ending(b)],
		['Wall time', `${num(b.wall_ms)} ms`],
		['Started', when(b.started_at)],
		['Finished', when(b.finished_at)],
		['Toolchain', b.toolchain ? h('code', {}, b.toolchain) : h('span', { class: 'muted' }, 'not recorded')],
		['Directory', h('code', {}, b.dir ?? '')],
		['Fingerprint', [hash(b.fingerprint_hash), d.device ? ` ${d.device}, ${d.driver}` : '', d.kernel ? `; kernel ${d.kernel}` : '']],
	]));
	fill('artifacts', b.artifacts.length
		? table(['Name', 'Path', ['Size (bytes)', '.num'], 'sha256'],
			b.artifacts.map((a) => [h('code', {}, a.name), h('code', {}, a.path), [String(a.size), '.num'], hash(a.sha256)]), 'artifacts')
		: h('p', { class: 'muted' }, 'No artifact was recorded.'));
	fill('runners', runners(b));
	fill('log',
		h('p', { class: 'note' }, `${b.log_bytes} bytes written` + (b.log_truncated ? '; the start is shown, the rest was not kept or is cut here' : '')),
		h('pre', { id: 'build-log' }, b.log || '(empty)'));
}

main().catch(fail).finally(ready);
