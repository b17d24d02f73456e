/* A floor for the WQ parser from the fastest JSON parser there is: how long
 * simdjson (Debian's libsimdjson-dev) takes to parse only the JSON objects of
 * a transaction log, in memory, no I/O, nothing aggregated, beside the time
 * to only find the log's line ends (memchr). Issue 10 asks tasklens to run
 * the 100k-line slice in about 7.5 ms end to end; this shows how much of that
 * budget the JSON alone costs at simdjson's speed.
 *   simdjson_floor FILE [ROUNDS]
 * Every line's text from its first '{' to its end (one or two objects, as
 * in "{} {...}" on DONE) goes in; comment lines do not. The texts are
 * gathered once into one whitespace-separated buffer (not timed) and parsed with
 * parse_many (simdjson's fastest full parse: every number converted, every
 * string unescaped into its DOM), and each document's numbers are summed so
 * nothing is optimized away. Built only when simdjson is found; never run by
 * CI. */
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static double now()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static double sum_numbers(simdjson::dom::element e)
{
    double s = 0;
    switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: {
        simdjson::dom::array a = e.get_array().value_unsafe();
        for (auto v : a) s += sum_numbers(v);
        break;
    }
    case simdjson::dom::element_type::OBJECT:
    {
        simdjson::dom::object o = e.get_object().value_unsafe();
        for (auto kv : o) s += sum_numbers(kv.value);
        break;
    }
    case simdjson::dom::element_type::DOUBLE: s += e.get_double().value_unsafe(); break;
    case simdjson::dom::element_type::INT64: s += (double)e.get_int64().value_unsafe(); break;
    case simdjson::dom::element_type::UINT64: s += (double)e.get_uint64().value_unsafe(); break;
    default: break;
    }
    return s;
}

/* The same walk with the On-Demand API, which converts a number only when
 * it is read (here every one is). */
static double sum_numbers_od(simdjson::ondemand::value v)
{
    double s = 0;
    switch (v.type().value_unsafe()) {
    case simdjson::ondemand::json_type::array:
        for (auto x : v.get_array()) s += sum_numbers_od(x.value_unsafe());
        break;
    case simdjson::ondemand::json_type::object:
        for (auto f : v.get_object()) s += sum_numbers_od(f.value().value_unsafe());
        break;
    case simdjson::ondemand::json_type::number: s += v.get_double().value_unsafe(); break;
    default: break;
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: simdjson_floor FILE [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    simdjson::padded_string file;
    if (simdjson::padded_string::load(argv[1]).get(file)) {
        std::fprintf(stderr, "simdjson_floor: cannot read %s\n", argv[1]);
        return 1;
    }
    const char *buf = file.data(), *end = buf + file.size();

    std::string nd;
    size_t docs = 0, lines = 0;
    for (const char *p = buf; p < end;) {
        const char *nl = (const char *)std::memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        const char *brace = (const char *)std::memchr(p, '{', (size_t)(e - p));
        if (brace && *p != '#') { /* comment lines hold "{resources}", not JSON */
            nd.append(brace, (size_t)(e - brace));
            nd.push_back('\n');
            docs++;
        }
        lines++;
        p = e + 1;
    }
    simdjson::padded_string json(nd);

    double best_json = 1e9, best_lines = 1e9, best_od = 1e9, total = 0;
    size_t parsed = 0, parsed_od = 0, failed = 0, counted = 0;
    simdjson::dom::parser parser;
    simdjson::ondemand::parser odparser;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        counted = 0;
        for (const char *p = buf; (p = (const char *)std::memchr(p, '\n', (size_t)(end - p))); p++) counted++;
        double t1 = now();
        simdjson::dom::document_stream stream;
        if (parser.parse_many(json, 1 << 20).get(stream)) return 1;
        parsed = failed = 0;
        for (auto doc : stream) {
            simdjson::dom::element e;
            if (doc.get(e)) {
                failed++;
                continue;
            }
            total += sum_numbers(e);
            parsed++;
        }
        double t2 = now();
        simdjson::ondemand::document_stream ods;
        if (odparser.iterate_many(json, 1 << 20).get(ods)) return 1;
        parsed_od = 0;
        for (auto doc : ods) {
            simdjson::ondemand::value v;
            if (doc.get_value().get(v)) {
                failed++;
                break; /* the stream cannot resume after an error */
            }
            total += sum_numbers_od(v);
            parsed_od++;
        }
        double t3 = now();
        if (t1 - t0 < best_lines) best_lines = t1 - t0;
        if (t2 - t1 < best_json) best_json = t2 - t1;
        if (t3 - t2 < best_od) best_od = t3 - t2;
    }
    std::printf("%s: %zu lines (%zu counted), %.1f MB; %zu lines with JSON, %.1f MB (%zu documents "
                "parsed by DOM, %zu by On-Demand, %zu failed; checksum %g)\n",
                argv[1], lines, counted, file.size() / 1e6, docs, nd.size() / 1e6, parsed, parsed_od, failed,
                total);
    std::printf("simdjson %d.%d.%d, kernel %s\n", (int)simdjson::SIMDJSON_VERSION_MAJOR,
                (int)simdjson::SIMDJSON_VERSION_MINOR, (int)simdjson::SIMDJSON_VERSION_REVISION,
                simdjson::get_active_implementation()->name().c_str());
    std::printf("best of %d: line ends (memchr) %.2f ms; JSON only: simdjson DOM parse_many "
                "%.2f ms (%.0f MB/s), On-Demand iterate_many %.2f ms (%.0f MB/s)\n",
                rounds, best_lines * 1e3, best_json * 1e3, nd.size() / best_json / 1e6, best_od * 1e3,
                nd.size() / best_od / 1e6);
    return 0;
}
