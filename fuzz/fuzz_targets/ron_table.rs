//! The RON readers of sampler descriptions: `StaticSamplerTable::from_ron` (root-signature
//! static samplers, checked as a set, R119) and serde's `SamplerDesc` / `StaticSamplerDesc` as
//! the Lua API reads them. No panic on any text; a table that reads back prints RON that reads
//! back to the same RON, looks up every entry it holds, and validates every description.
#![no_main]

use libfuzzer_sys::fuzz_target;
use penumbra_core::{SamplerDesc, ShaderVisibility, StaticSamplerDesc, StaticSamplerTable};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match StaticSamplerTable::from_ron(text) {
        Ok(table) => {
            let printed = table.to_ron();
            let again = StaticSamplerTable::from_ron(&printed)
                .unwrap_or_else(|e| panic!("to_ron output does not read back: {e}\n{printed}"));
            assert_eq!(again.to_ron(), printed, "RON round trip changed the table");
            assert_eq!(again.len(), table.len());
            for (name, desc) in table.iter() {
                desc.validate().expect("entries of a table are valid");
                let _ = desc.to_sampler_desc().validate();
                let found = table
                    .lookup(
                        desc.register_space,
                        desc.shader_register,
                        desc.shader_visibility,
                    )
                    .expect("every entry is found at its own binding");
                assert!(std::ptr::eq(found, desc), "lookup found another entry");
                if let Some(name) = name {
                    assert!(table.get(name).is_some());
                }
                for stage in ShaderVisibility::ALL {
                    let _ = table.lookup(desc.register_space, desc.shader_register, stage);
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Ok(desc) = ron::from_str::<SamplerDesc>(text) {
        let _ = desc.validate();
        if let Ok(printed) = ron::to_string(&desc) {
            let again: SamplerDesc = ron::from_str(&printed)
                .unwrap_or_else(|e| panic!("SamplerDesc RON does not read back: {e}\n{printed}"));
            assert_eq!(ron::to_string(&again).ok(), Some(printed));
        }
    }
    if let Ok(desc) = ron::from_str::<StaticSamplerDesc>(text) {
        let _ = desc.validate();
        let _ = desc.to_sampler_desc();
    }
});
