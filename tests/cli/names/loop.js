// A hot JavaScript function and a hot V8 builtin (Array.prototype.sort).
function loop(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i & 7);
  return s;
}
function sorts(rounds) {
  let t = 0;
  for (let r = 0; r < rounds; r++) {
    const a = [];
    for (let i = 0; i < 20000; i++) a.push((i * 2654435761) % 1000003);
    a.sort();
    t += a[7];
  }
  return t;
}
const end = Date.now() + 1500;
let x = 0;
while (Date.now() < end) { x += loop(2000000); x += sorts(2); }
console.log(x > 0 ? 'ok' : 'no');
