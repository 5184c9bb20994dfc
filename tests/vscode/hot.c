/* The program the editor test profiles from VS Code: one hot loop and a colder one, so
 * the flame graph has hot_loop in it and the heat lands on their lines. */
static volatile double sink;

__attribute__((noinline)) static void hot_loop(long n)
{
    for (long i = 0; i < n; i++)
        sink += i * 0.5;
}

__attribute__((noinline)) static void cold_loop(long n)
{
    for (long i = 0; i < n; i++)
        sink -= i * 0.25;
}

int main(void)
{
    for (int k = 0; k < 20; k++) {
        hot_loop(30000000);
        cold_loop(8000000);
    }
    return 0;
}
