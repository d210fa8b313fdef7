/* Driver for tests/test_loadlat.py: loadlat's cpu_list_format on lists that do not fit the buffer
 * (a 600-CPU patchy list into 512 bytes; "1,2,5" into 8 and 4 bytes). Built with AddressSanitizer
 * where the compiler has it: an overflow aborts. Prints the results, one per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cpu_list_format(const int *c, int n, char *out, size_t len);

int main(void)
{
    int c[600], n = 0;
    for (int i = 0; n < 600; i += 3) {
        c[n++] = i;
        c[n++] = i + 1;
    }
    char *big = malloc(512);
    cpu_list_format(c, n, big, 512);
    printf("%zu\n", strlen(big));
    int d[3] = {1, 2, 5};
    char *s8 = malloc(8), *s4 = malloc(4);
    cpu_list_format(d, 3, s8, 8);
    cpu_list_format(d, 3, s4, 4);
    printf("%s\n%s\n", s8, s4);
    free(big);
    free(s8);
    free(s4);
    return 0;
}
