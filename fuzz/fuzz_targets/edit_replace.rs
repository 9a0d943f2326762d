//! `agentgate_tools::replace` (the edit tool's replacer chain) on arbitrary
//! `content \0 old \0 new`: never panics; an exact, unique `old` (no
//! other occurrence, overlapping ones included) is replaced exactly
//! (literally, unless `replace_all` and `new` has `$` patterns).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(3, '\0');
    let (Some(content), Some(old), Some(new)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let all = content.len() % 2 == 0;
    let result = agentgate_tools::replace(content, old, new, all);
    // Unique as opencode means it: first and last occurrence coincide
    // (`"aaaa"` occurs three times in `"aaaaaa"`, overlapping). With
    // `replace_all`, `$&`, `$$`, `` $` `` and `$'` in `new` are expanded as
    // JavaScript's `replaceAll` does (§17), so `new` is literal only
    // without `$`.
    if !old.is_empty()
        && (!all || !new.contains('$'))
        && old != new
        && content.find(old).is_some()
        && content.find(old) == content.rfind(old)
    {
        assert_eq!(
            result.as_deref().ok(),
            Some(content.replacen(old, new, 1).as_str()),
            "replace({content:?}, {old:?}, {new:?}, {all})"
        );
    }
});
