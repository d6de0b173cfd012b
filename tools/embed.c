/* Build-time helper: turns a file (SPIR-V, OpenCL C, code object) into a C
 * source defining `const unsigned char SYMBOL[]` and `const size_t SYMBOL_size`,
 * so kernels travel inside the binary and nothing is looked up on disk. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s INPUT OUTPUT.c SYMBOL\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "embed: cannot open %s\n", argv[1]);
        return 1;
    }
    FILE *out = fopen(argv[2], "w");
    if (!out) {
        fprintf(stderr, "embed: cannot create %s\n", argv[2]);
        fclose(in);
        return 1;
    }
    /* 4-byte alignment: SPIR-V words are read in place */
    fprintf(out, "#include <stddef.h>\n_Alignas(4) const unsigned char %s[] = {", argv[3]);
    size_t n = 0;
    int c;
    while ((c = fgetc(in)) != EOF) fprintf(out, "%s%u,", (n++ % 24) ? "" : "\n", (unsigned)c);
    /* a trailing 0 makes text kernels usable as C strings; not counted in size */
    fprintf(out, "0};\nconst size_t %s_size = %zu;\n", argv[3], n);
    int failed = ferror(in) || fclose(out) != 0;
    fclose(in);
    return failed ? 1 : 0;
}
