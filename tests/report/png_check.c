/* Checks a screenshot (8-bit RGB/RGBA PNG) is not blank and shows the charts:
 *   png_check FILE.png [--min-colors N] [--min-ink PCT] [--color RRGGBB:MIN_PIXELS]...
 *                      [--regions RRGGBB,RRGGBB,...:MIN_REGIONS]
 * --regions counts separate vertical bands (gaps over 40 rows) holding pixels of the
 * given chart colours: one band per chart block. Prints what it measured; exit 0 when
 * every check passes, 1 otherwise, 2 on a file it cannot read. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct image {
    uint32_t w, h;
    uint8_t *rgb; /* w * h * 3 */
} image;

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static int load_png(const char *path, image *img)
{
    FILE *f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "png_check: cannot open %s\n", path), -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *file = malloc((size_t)size);
    if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) return fclose(f), free(file), -1;
    fclose(f);
    static const uint8_t sig[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    if (size < 8 || memcmp(file, sig, 8) != 0) return fprintf(stderr, "png_check: %s is not a PNG\n", path), free(file), -1;
    uint8_t *idat = malloc((size_t)size);
    size_t idat_len = 0;
    int depth = 0, color = 0, interlace = 0;
    for (long p = 8; p + 12 <= size;) {
        uint32_t len = be32(file + p);
        const uint8_t *type = file + p + 4, *data = file + p + 8;
        if (p + 12 + (long)len > size) break;
        if (memcmp(type, "IHDR", 4) == 0) {
            img->w = be32(data), img->h = be32(data + 4), depth = data[8], color = data[9], interlace = data[12];
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(idat + idat_len, data, len), idat_len += len;
        }
        p += 12 + (long)len;
    }
    free(file);
    int channels = color == 6 ? 4 : color == 2 ? 3 : 0;
    if (depth != 8 || !channels || interlace) {
        fprintf(stderr, "png_check: unsupported PNG (depth %d, colour type %d, interlace %d)\n", depth, color, interlace);
        free(idat);
        return -1;
    }
    size_t stride = (size_t)img->w * (size_t)channels;
    uLongf raw_len = (uLongf)((stride + 1) * img->h);
    uint8_t *raw = malloc(raw_len);
    if (!raw || uncompress(raw, &raw_len, idat, (uLong)idat_len) != Z_OK || raw_len != (stride + 1) * img->h) {
        fprintf(stderr, "png_check: bad image data\n");
        free(raw), free(idat);
        return -1;
    }
    free(idat);
    uint8_t *pix = malloc(stride * img->h);
    for (uint32_t y = 0; y < img->h; ++y) {
        const uint8_t *in = raw + y * (stride + 1) + 1;
        uint8_t *out = pix + y * stride, *up = y ? out - stride : NULL;
        int filter = in[-1];
        for (size_t x = 0; x < stride; ++x) {
            int a = x >= (size_t)channels ? out[x - channels] : 0, b = up ? up[x] : 0,
                c = up && x >= (size_t)channels ? up[x - channels] : 0, v = in[x];
            switch (filter) {
            case 1: v += a; break;
            case 2: v += b; break;
            case 3: v += (a + b) / 2; break;
            case 4: v += paeth(a, b, c); break;
            }
            out[x] = (uint8_t)v;
        }
    }
    free(raw);
    img->rgb = malloc((size_t)img->w * img->h * 3);
    for (size_t i = 0; i < (size_t)img->w * img->h; ++i) memcpy(img->rgb + i * 3, pix + i * (size_t)channels, 3);
    free(pix);
    return 0;
}

static bool near(const uint8_t *p, uint32_t rgb)
{
    int r = (int)(rgb >> 16 & 255), g = (int)(rgb >> 8 & 255), b = (int)(rgb & 255);
    return abs(p[0] - r) <= 2 && abs(p[1] - g) <= 2 && abs(p[2] - b) <= 2;
}

static long count_color(const image *img, uint32_t rgb)
{
    long n = 0;
    for (size_t i = 0; i < (size_t)img->w * img->h; ++i) n += near(img->rgb + i * 3, rgb);
    return n;
}

/* Bands of rows that hold at least 3 pixels of any of the colours. */
static int count_regions(const image *img, const uint32_t *colors, int n)
{
    int regions = 0;
    long last = -1000;
    for (uint32_t y = 0; y < img->h; ++y) {
        int hits = 0;
        for (uint32_t x = 0; x < img->w && hits < 3; ++x)
            for (int k = 0; k < n; ++k) hits += near(img->rgb + ((size_t)y * img->w + x) * 3, colors[k]);
        if (hits < 3) continue;
        if ((long)y - last > 40) {
            ++regions;
            printf("  region %d starts at row %u\n", regions, y);
        }
        last = y;
    }
    return regions;
}

int main(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "usage: png_check FILE.png [checks]\n"), 2;
    image img = {0};
    if (load_png(argv[1], &img) != 0) return 2;
    size_t pixels = (size_t)img.w * img.h;
    uint8_t *seen = calloc(1 << 21, 1);
    long distinct = 0, ink = 0;
    for (size_t i = 0; i < pixels; ++i) {
        const uint8_t *p = img.rgb + i * 3;
        uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        if (!(seen[v >> 3] & (1 << (v & 7)))) seen[v >> 3] |= (uint8_t)(1 << (v & 7)), ++distinct;
        ink += !(p[0] > 245 && p[1] > 245 && p[2] > 245);
    }
    free(seen);
    double ink_pct = 100.0 * (double)ink / (double)pixels;
    printf("%s: %ux%u, %ld distinct colours, %.1f%% non-white\n", argv[1], img.w, img.h, distinct, ink_pct);
    int failures = 0;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--min-colors") == 0 && i + 1 < argc) {
            long min = atol(argv[++i]);
            if (distinct < min) printf("FAIL: %ld distinct colours < %ld\n", distinct, min), ++failures;
        } else if (strcmp(argv[i], "--min-ink") == 0 && i + 1 < argc) {
            double min = atof(argv[++i]);
            if (ink_pct < min) printf("FAIL: %.1f%% non-white < %.1f%%\n", ink_pct, min), ++failures;
        } else if (strcmp(argv[i], "--color") == 0 && i + 1 < argc) {
            uint32_t rgb = 0;
            long min = 0;
            if (sscanf(argv[++i], "%6x:%ld", &rgb, &min) != 2) return fprintf(stderr, "bad --color %s\n", argv[i]), 2;
            long n = count_color(&img, rgb);
            printf("  #%06x: %ld pixels\n", rgb, n);
            if (n < min) printf("FAIL: #%06x has %ld pixels < %ld\n", rgb, n, min), ++failures;
        } else if (strcmp(argv[i], "--regions") == 0 && i + 1 < argc) {
            uint32_t colors[16];
            int n = 0, min = 0;
            char *spec = argv[++i], *colon = strrchr(spec, ':');
            if (!colon) return fprintf(stderr, "bad --regions %s\n", spec), 2;
            min = atoi(colon + 1);
            for (char *p = spec; p < colon && n < 16; p += 7) colors[n++] = (uint32_t)strtoul(p, NULL, 16);
            int regions = count_regions(&img, colors, n);
            printf("  %d chart regions\n", regions);
            if (regions < min) printf("FAIL: %d chart regions < %d\n", regions, min), ++failures;
        } else {
            return fprintf(stderr, "png_check: unknown argument %s\n", argv[i]), 2;
        }
    }
    free(img.rgb);
    printf("%s\n", failures ? "png_check: FAILED" : "png_check: ok");
    return failures ? 1 : 0;
}
