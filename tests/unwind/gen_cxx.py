"""Writes a C++ source of N template-heavy functions (argv[1]) to stdout: a large file for
an optimizing compiler, whose parser and optimizers run 20-130 KiB deep (clang)."""
import sys
n = int(sys.argv[1])
print("#include <bits/stdc++.h>")
for i in range(n):
    print(f"""
template <typename T> struct S{i} {{ std::map<std::string, std::vector<T>> m; std::unordered_map<int, std::set<T>> u;
  T run(int k) {{ T acc{{}}; for (auto &kv : m) for (auto &v : kv.second) acc += v * (T)k; 
    auto it = u.find(k); if (it != u.end()) for (auto &x : it->second) acc -= x;
    std::sort(m[std::to_string(k)].begin(), m[std::to_string(k)].end(), [](T a, T b) {{ return a > b; }});
    return acc + (T)std::accumulate(m.begin(), m.end(), 0, [](int s, auto &p) {{ return s + (int)p.second.size(); }}); }} }};
double f{i}(int k) {{ S{i}<double> a; S{i}<long> b; std::function<double(int)> g = [&](int z) {{ return a.run(z) + (double)b.run(z + {i}); }};
  std::vector<std::pair<std::string, double>> v; for (int j = 0; j < k; j++) v.emplace_back(std::to_string(j), g(j));
  std::stable_sort(v.begin(), v.end()); std::ostringstream os; for (auto &p : v) os << p.first << p.second; return (double)os.str().size(); }}""")
print("int main(){ double s=0;", "".join(f"s+=f{i}(3);" for i in range(n)), "return (int)s; }")
