// Long templated names, a lambda on a std::thread: the names the report must keep
// readable and apart at any width. Both threads run for about the same CPU time, so
// churn's own time (its loop around the map and the vector) is a row of the report
// in every run, not a handful of samples.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace engine {
template <typename Key, typename Value, typename Policy> struct table {
    std::map<Key, std::vector<Value>> rows;
    __attribute__((noinline)) Value churn(const Key &k, int n)
    {
        Value acc{};
        for (int i = 0; i < n * 20; i++) {
            auto &v = rows[k];
            v.push_back(Value(i));
            if (v.size() > 64) v.clear();
            acc += v.back();
        }
        return acc;
    }
    __attribute__((noinline)) Value spin(const Key &k, int n)
    {
        Value acc{};
        for (int i = 0; i < n * 200; i++) acc += (Value)(i ^ k.size()) * (Value)1.0001;
        return acc;
    }
};
struct fast_policy {};
struct slow_policy {};
} // namespace engine

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000000;
    engine::table<std::string, double, engine::fast_policy> a;
    engine::table<std::string, long, engine::slow_policy> b;
    double r1 = 0;
    long r2 = 0;
    std::thread t([&] { for (int i = 0; i < 4; i++) r1 += a.churn(std::string("key"), n / 4); });
    for (int i = 0; i < 4; i++) r2 += b.spin(std::string("other"), n / 4);
    t.join();
    printf("%f %ld\n", r1, r2);
    return 0;
}
